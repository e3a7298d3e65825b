/**
 * `npm run db:dump`: migrates a scratch database (on DATABASE_URL's server, else an embedded
 * PostgreSQL under `.data/dump-pg`) and writes `db/schema.sql`, the whole public schema in one
 * file for reviewers; `test/db/schema-dump.test.ts` fails when the committed file is stale.
 *
 * Written from the catalog here rather than by pg_dump: the machine's pg_dump (15) refuses the
 * embedded server (17), and CI runs the suite on both, so the text must not depend on which
 * server or client made it. Every object is sorted by name (byte order, not the database's
 * collation), and every definition comes from the server's own deparser (pg_get_constraintdef,
 * pg_get_indexdef, pg_get_functiondef …), run with a fixed search_path. For this schema those
 * print the same on 15.20 and 17.10 (the two dumps were byte-identical); what would differ on
 * some server is normalised or left out (see HEADER). Kinds of object this file cannot describe
 * yet make the dump fail rather than go missing from it silently.
 */
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { loadConfigOrExit } from '../platform/config.ts';
import { createLogger } from '../platform/log.ts';
import { postgresServer, withMigratedDatabase } from './scratch-database.ts';
import * as catalog from './catalog.ts';

/** The committed dump. */
export const SCHEMA_FILE = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'schema.sql');

const HEADER = `-- The public schema that db/migrations/ build, written by \`npm run db:dump\`
-- (db/schema/dump.ts) from a freshly migrated database. Do not edit: add a migration and
-- run npm run db:dump; npm test fails while this file differs from what the migrations build.
--
-- Left out: the pg-boss schema (pgboss: pg-boss installs and upgrades it itself), knex's
-- bookkeeping tables (knex_migrations, knex_migrations_lock), owners, privileges, comments,
-- plpgsql (in every database) and the objects extensions create (btree_gist's functions and
-- operators). The text is the same on PostgreSQL 15 and 17: objects are sorted in byte order, not
-- by the database's collation; extensions appear without their version, which follows the
-- server's release; NOT NULL shows only on its column (PostgreSQL 18 also catalogs it as a
-- constraint with a generated name).
`;

/** Describes the public schema of the database at `databaseUrl` (see the module comment). */
export async function dumpSchema(databaseUrl: string): Promise<string> {
  const client = new pg.Client({ connectionString: databaseUrl, application_name: 'booking-schema-dump' });
  await client.connect();
  try {
    // One snapshot for every read. With only public on the search path the deparsers name our
    // objects unqualified, whatever the connecting role's own search_path is.
    await client.query('begin isolation level repeatable read read only');
    await client.query('set local search_path = public');
    const schema = await catalog.read(client);
    await client.query('commit');
    return render(schema);
  } finally {
    await client.end();
  }
}

function render(schema: catalog.Schema): string {
  const sections = [
    section(
      'Extensions',
      schema.extensions.map(
        (e) =>
          `CREATE EXTENSION IF NOT EXISTS ${e.name}${e.schema === 'public' ? '' : ` WITH SCHEMA ${e.schema}`};`,
      ),
    ),
    section('Tables, each with its indexes and triggers', schema.tables.map(renderTable)),
    section('Sequences', schema.sequences.map(renderSequence)),
    section(
      'Views',
      // pg_get_viewdef's layout has changed between releases: a view added here may need its text
      // normalised before the dump is the same on PostgreSQL 15 and 17.
      schema.views.map(
        (v) =>
          `CREATE ${v.materialized ? 'MATERIALIZED VIEW' : 'VIEW'} ${v.name} AS\n${v.definition.trimEnd()}`,
      ),
    ),
    section(
      'Functions',
      schema.functions.map((f) => `${f.trimEnd()};`),
    ),
  ];
  return [HEADER, ...sections.filter(Boolean)].join('\n').replace(/\n+$/, '\n');
}

function section(title: string, blocks: string[]): string {
  return blocks.length ? `-- ${title}\n\n${blocks.map((b) => `${b}\n`).join('\n')}` : '';
}

function renderTable(table: catalog.Table): string {
  const lines = [
    // A multi-line expression (pg_get_expr lays out CASE over lines) is indented under its column.
    ...table.columns.map((c) => renderColumn(c).replaceAll('\n', '\n    ')),
    ...table.constraints.map((c) => `CONSTRAINT ${c.name} ${c.definition}`),
  ];
  const persistence = table.unlogged ? 'UNLOGGED ' : '';
  const options = table.options ? ` WITH (${table.options})` : '';
  return [
    `CREATE ${persistence}TABLE ${table.name} (\n${lines.map((l) => `  ${l}`).join(',\n')}\n)${options};`,
    ...table.indexes.map((i) => `${i};`),
    ...table.triggers.map((t) => `${t};`),
  ].join('\n');
}

function renderColumn(c: catalog.Column): string {
  let text = `${c.name} ${c.type}`;
  if (c.collation) text += ` COLLATE ${c.collation}`;
  if (c.generated === 's') text += ` GENERATED ALWAYS AS (${c.expression}) STORED`;
  if (c.identity && c.sequence) {
    const kind = c.identity === 'a' ? 'ALWAYS' : 'BY DEFAULT';
    text += ` GENERATED ${kind} AS IDENTITY (${sequenceOptions(c.sequence)})`;
  }
  if (c.not_null) text += ' NOT NULL';
  if (c.expression && c.generated !== 's') text += ` DEFAULT ${c.expression}`;
  return text;
}

function renderSequence(s: catalog.Sequence): string {
  const create = `CREATE SEQUENCE ${s.name} AS ${s.type} ${sequenceOptions(s)};`;
  return s.owned_by ? `${create}\nALTER SEQUENCE ${s.name} OWNED BY ${s.owned_by};` : create;
}

/** Every option, defaults included, so that no default of any release is assumed. */
function sequenceOptions(s: catalog.SequenceOptions): string {
  const cycle = s.cycle ? ' CYCLE' : '';
  return `START WITH ${s.start} INCREMENT BY ${s.increment} MINVALUE ${s.min} MAXVALUE ${s.max} CACHE ${s.cache}${cycle}`;
}

if (import.meta.main) {
  const config = loadConfigOrExit();
  const log = createLogger('warn');
  const server = await postgresServer(config.databaseUrl, 'dump-pg', log);
  try {
    const schema = await withMigratedDatabase(server.adminUrl, 'booking_dump', log, (url) => dumpSchema(url));
    await writeFile(SCHEMA_FILE, schema);
    const where = server.embedded ? 'an embedded PostgreSQL (.data/dump-pg)' : 'the server of DATABASE_URL';
    process.stdout.write(`wrote db/schema.sql (${schema.split('\n').length - 1} lines) from ${where}\n`);
  } catch (err) {
    process.stderr.write(`db:dump failed: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
  } finally {
    await server.stop();
  }
}
