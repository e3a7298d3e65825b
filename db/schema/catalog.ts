/**
 * What `dump.ts` reads from the catalog: the objects of the public schema that are ours
 * (not created by an extension, not knex's bookkeeping), each with the server's own deparse of its
 * definition, sorted by name in byte order so that the result is the same on every server.
 */
import type { Client } from 'pg';

/** knex's bookkeeping tables: not part of the service's schema. */
const KNEX_TABLES = ['knex_migrations', 'knex_migrations_lock'];

/** An extension, and the schema it was installed in. */
export interface Extension {
  name: string;
  schema: string;
}

/** A column as the catalog describes it. */
export interface Column {
  name: string;
  type: string;
  collation: string | null;
  not_null: boolean;
  /** '' plain, 'a' generated always as identity, 'd' by default as identity. */
  identity: string;
  /** '' plain, 's' stored generated column (its expression is `expression`). */
  generated: string;
  /** The default, or the generation expression of a generated column. */
  expression: string | null;
  /** The options of its identity sequence, for an identity column. */
  sequence: SequenceOptions | null;
}

/** A table with everything that hangs off it. */
export interface Table {
  oid: string;
  name: string;
  unlogged: boolean;
  /** Storage parameters (`fillfactor=70, …`), or null. */
  options: string | null;
  columns: Column[];
  /** Primary key, unique, exclusion, foreign key and check constraints, in that order, each by name. */
  constraints: { name: string; definition: string }[];
  /** CREATE INDEX statements of the indexes that no constraint owns, by name. */
  indexes: string[];
  /** CREATE TRIGGER statements, by name. */
  triggers: string[];
}

/** The parameters of a sequence (pg_sequence). */
export interface SequenceOptions {
  type: string;
  start: string;
  increment: string;
  min: string;
  max: string;
  cache: string;
  cycle: boolean;
}

/** A sequence that is not an identity column's, with the column owning it if any. */
export interface Sequence extends SequenceOptions {
  name: string;
  owned_by: string | null;
}

/** A view or materialized view. */
export interface View {
  name: string;
  materialized: boolean;
  definition: string;
}

/** Everything the dump prints. */
export interface Schema {
  extensions: Extension[];
  tables: Table[];
  sequences: Sequence[];
  views: View[];
  /** CREATE OR REPLACE FUNCTION statements, by name and then arguments. */
  functions: string[];
}

/** `oid` (of a row of `catalog`) does not belong to an extension. */
const notFromExtension = (catalog: string, oid: string) =>
  `not exists (select 1 from pg_depend x where x.classid = '${catalog}'::regclass and x.objid = ${oid}
               and x.deptype = 'e')`;

const PUBLIC = "'public'::regnamespace";

const SEQUENCE_OPTIONS = `format_type(s.seqtypid, null) as type, s.seqstart::text as start,
  s.seqincrement::text as increment, s.seqmin::text as min, s.seqmax::text as max, s.seqcache::text as cache,
  s.seqcycle as cycle`;

/** Reads the schema (call inside one read-only transaction, with search_path set to public). */
export async function read(client: Client): Promise<Schema> {
  await refuseUndescribed(client);
  const extensions = await client.query<Extension>(
    `select quote_ident(e.extname) as name, quote_ident(n.nspname) as schema
       from pg_extension e join pg_namespace n on n.oid = e.extnamespace
      where e.extname <> 'plpgsql'`,
  );
  const views = await client.query<View>(
    `select quote_ident(c.relname) as name, c.relkind = 'm' as materialized,
            pg_get_viewdef(c.oid, true) as definition
       from pg_class c where c.relnamespace = ${PUBLIC} and c.relkind in ('v', 'm')
        and ${notFromExtension('pg_class', 'c.oid')}`,
  );
  return {
    extensions: extensions.rows.sort(byName),
    tables: (await readTables(client)).sort(byName),
    sequences: (await readSequences(client)).sort(byName),
    views: views.rows.sort(byName),
    functions: await readFunctions(client),
  };
}

/** Our tables, each with its columns, constraints, indexes and triggers. */
async function readTables(client: Client): Promise<Table[]> {
  const { rows: tables } = await client.query<Table>(
    `select c.oid::text as oid, quote_ident(c.relname) as name, c.relpersistence = 'u' as unlogged,
            array_to_string(c.reloptions, ', ') as options
       from pg_class c
      where c.relnamespace = ${PUBLIC} and c.relkind = 'r' and c.relname <> all ($1)
        and ${notFromExtension('pg_class', 'c.oid')}`,
    [KNEX_TABLES],
  );
  const oids = tables.map((t) => t.oid);
  // One after another: a pg.Client runs one query at a time anyway.
  const columns = await readColumns(client, oids);
  const parts = async (sql: string) => (await client.query<Part>(sql, [oids])).rows;
  const constraints = await parts(
    // contype n: PostgreSQL 18's named NOT NULL constraints (shown on their columns instead);
    // t: constraint triggers, which come with the triggers.
    `select conrelid::text as table_oid, quote_ident(conname) as name, pg_get_constraintdef(oid) as definition,
            array_position(array['p', 'u', 'x', 'f', 'c']::"char"[], contype) as rank
       from pg_constraint where conrelid = any ($1::oid[]) and contype not in ('n', 't')`,
  );
  // Indexes that back a primary key, unique or exclusion constraint come with the constraint.
  const indexes = await parts(
    `select i.indrelid::text as table_oid, c.relname as name, pg_get_indexdef(i.indexrelid) as definition, 0 as rank
       from pg_index i join pg_class c on c.oid = i.indexrelid
      where i.indrelid = any ($1::oid[])
        and not exists (select 1 from pg_constraint k where k.conindid = i.indexrelid and k.conrelid = i.indrelid
                                                         and k.contype in ('p', 'u', 'x'))`,
  );
  const triggers = await parts(
    `select tgrelid::text as table_oid, tgname as name, pg_get_triggerdef(oid) as definition, 0 as rank
       from pg_trigger where tgrelid = any ($1::oid[]) and not tgisinternal`,
  );
  for (const table of tables) {
    const of = (all: Part[]) => all.filter((p) => p.table_oid === table.oid).sort(byRankThenName);
    table.columns = columns.filter((c) => c.table_oid === table.oid);
    table.constraints = of(constraints);
    table.indexes = of(indexes).map((i) => i.definition);
    table.triggers = of(triggers).map((t) => t.definition);
  }
  return tables;
}

interface Part {
  table_oid: string;
  name: string;
  definition: string;
  rank: number;
}

async function readColumns(client: Client, tableOids: string[]): Promise<(Column & { table_oid: string })[]> {
  const { rows } = await client.query(
    `select a.attrelid::text as table_oid, quote_ident(a.attname) as name, format_type(a.atttypid, a.atttypmod) as type,
            case when a.attcollation <> t.typcollation then quote_ident(co.collname) end as collation,
            a.attnotnull as not_null, a.attidentity::text as identity, a.attgenerated::text as generated,
            pg_get_expr(d.adbin, d.adrelid) as expression,
            (select row_to_json(q) from (select ${SEQUENCE_OPTIONS}
               from pg_depend dep join pg_sequence s on s.seqrelid = dep.objid
              where dep.classid = 'pg_class'::regclass and dep.refobjid = a.attrelid
                and dep.refobjsubid = a.attnum and dep.deptype = 'i') q) as sequence
       from pg_attribute a
       join pg_type t on t.oid = a.atttypid
       left join pg_collation co on co.oid = a.attcollation
       left join pg_attrdef d on d.adrelid = a.attrelid and d.adnum = a.attnum
      where a.attrelid = any ($1::oid[]) and a.attnum > 0 and not a.attisdropped
      order by a.attrelid, a.attnum`,
    [tableOids],
  );
  return rows as (Column & { table_oid: string })[];
}

/** Sequences of our own: not an identity column's, nor one of knex's tables'. */
async function readSequences(client: Client): Promise<Sequence[]> {
  const { rows } = await client.query(
    `select quote_ident(c.relname) as name, ${SEQUENCE_OPTIONS},
            (select quote_ident(t.relname) || '.' || quote_ident(a.attname)
               from pg_depend d join pg_class t on t.oid = d.refobjid
               join pg_attribute a on a.attrelid = d.refobjid and a.attnum = d.refobjsubid
              where d.classid = 'pg_class'::regclass and d.objid = c.oid and d.deptype = 'a') as owned_by
       from pg_class c join pg_sequence s on s.seqrelid = c.oid
      where c.relnamespace = ${PUBLIC} and c.relkind = 'S' and ${notFromExtension('pg_class', 'c.oid')}
        and not exists (select 1 from pg_depend d join pg_class t on t.oid = d.refobjid
                         where d.classid = 'pg_class'::regclass and d.objid = c.oid
                           and (d.deptype = 'i' or (d.deptype = 'a' and t.relname = any ($1))))`,
    [KNEX_TABLES],
  );
  return rows as Sequence[];
}

async function readFunctions(client: Client): Promise<string[]> {
  const { rows } = await client.query<{ name: string; args: string; definition: string }>(
    `select p.proname as name, pg_get_function_identity_arguments(p.oid) as args,
            pg_get_functiondef(p.oid) as definition
       from pg_proc p
      where p.pronamespace = ${PUBLIC} and p.prokind in ('f', 'p') and ${notFromExtension('pg_proc', 'p.oid')}`,
  );
  return rows.sort((a, b) => compare(a.name, b.name) || compare(a.args, b.args)).map((f) => f.definition);
}

/**
 * Throws, naming them, when the public schema holds objects of a kind the dump does not print,
 * so that adding one (a domain, a policy, a partitioned table …) cannot leave db/schema.sql
 * silently incomplete. Teach this module the kind, then run npm run db:dump.
 */
async function refuseUndescribed(client: Client): Promise<void> {
  const { rows } = await client.query<{ object: string }>(
    `select kind || ' ' || name as object from (
       select case c.relkind when 'p' then 'partitioned table' when 'f' then 'foreign table'
                             else 'composite type' end as kind, c.relname as name
         from pg_class c where c.relnamespace = ${PUBLIC} and c.relkind in ('p', 'f', 'c')
          and ${notFromExtension('pg_class', 'c.oid')}
       union all
       select 'row-level security on', c.relname from pg_class c
        where c.relnamespace = ${PUBLIC} and (c.relrowsecurity or c.relforcerowsecurity)
       union all
       select 'inheritance of', c.relname from pg_inherits i join pg_class c on c.oid = i.inhrelid
        where c.relnamespace = ${PUBLIC}
       union all
       select 'rule', r.rulename from pg_rewrite r join pg_class c on c.oid = r.ev_class
        where c.relnamespace = ${PUBLIC} and r.rulename <> '_RETURN'
       union all
       select 'type', t.typname from pg_type t
        where t.typnamespace = ${PUBLIC} and t.typtype in ('d', 'e', 'r') and ${notFromExtension('pg_type', 't.oid')}
       union all
       select 'aggregate or window function', p.proname from pg_proc p
        where p.pronamespace = ${PUBLIC} and p.prokind in ('a', 'w') and ${notFromExtension('pg_proc', 'p.oid')}
     ) undescribed`,
  );
  if (rows.length) {
    const objects = rows.map((r) => r.object).sort(compare);
    throw new Error(`db/schema/dump.ts cannot describe ${objects.join(', ')} yet`);
  }
}

/** Byte order (UTF-16 code units): the same everywhere, unlike the database's collation. */
function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function byName(a: { name: string }, b: { name: string }): number {
  return compare(a.name, b.name);
}

function byRankThenName(a: Part, b: Part): number {
  return a.rank - b.rank || compare(a.name, b.name);
}
