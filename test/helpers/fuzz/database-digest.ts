/**
 * A digest of the database's business state, to tell whether a request changed anything: one
 * statement over every business table (every table of the public schema but knex's and the unlogged
 * rate-limit ones, listed from the catalog, so a new table is covered without a change here), each
 * as its row count and the sum of its rows' hashes, plus the count of pg-boss jobs. The fuzz reads
 * it before and after every request; a 4xx must leave it as it was.
 */
import pg from 'pg';
import type { Knex } from '../../../db/postgres/knex.ts';

/** Table name → `count:hash-sum` (`pgboss.job` → its count). */
export type Digest = Map<string, string>;

/** The digest of one database, read over a connection of its own. */
export interface DatabaseDigest {
  read(): Promise<Digest>;
  close(): Promise<void>;
}

/**
 * Opens the digest of the database at `url` (whose tables `db` lists). A connection of its own for
 * the digest, so its statement is planned once (0.7 ms, not 2).
 */
export async function openDigest(db: Knex, url: string): Promise<DatabaseDigest> {
  const client = new pg.Client({ connectionString: url, application_name: 'fuzz-digest' });
  await client.connect();
  const text = await digestStatement(db);
  return {
    async read() {
      const { rows } = await client.query<{ t: string; d: string }>({ name: 'digest', text });
      return new Map(rows.map((r) => [r.t, r.d]));
    },
    close: () => client.end(),
  };
}

/**
 * Columns any read may set, left out of the digest: a read of the availability feed first gives
 * positions to the changes already committed and moves the positioning's watermark and last
 * position (sequence_availability_changes()), which is the log's own bookkeeping, not an effect of the
 * request; what each change says is still covered.
 */
const BOOKKEEPING_COLUMNS: Record<string, string[]> = {
  availability_changes: ['position'],
  availability_change_sequencer: ['watermark', 'last_position'],
};

/** One statement over every business table, plus pg-boss's job count. */
async function digestStatement(db: Knex): Promise<string> {
  const { rows } = await db.raw<{ rows: { name: string }[] }>(
    `select c.relname as name
       from pg_class c join pg_namespace n on n.oid = c.relnamespace
      where n.nspname = 'public' and c.relkind in ('r', 'p') and c.relpersistence = 'p'
        and c.relname not like 'knex\\_migrations%' and c.relname not like 'rate\\_limit\\_%'
      order by 1`,
  );
  if (rows.length < 10) throw new Error(`only ${rows.length} business tables found`);
  const quote = (name: string) => `"${name.replace(/"/g, '""')}"`;
  const row = (name: string) =>
    name in BOOKKEEPING_COLUMNS
      ? `(to_jsonb(x) - array[${BOOKKEEPING_COLUMNS[name]!.map((c) => `'${c}'`).join(', ')}])::text`
      : 'x::text';
  return [
    ...rows.map(
      ({ name }) =>
        `select '${name}' as t, count(*) || ':' || coalesce(sum(hashtextextended(${row(name)}, 0)), 0) as d ` +
        `from public.${quote(name)} x`,
    ),
    "select 'pgboss.job', count(*)::text from pgboss.job",
  ].join(' union all ');
}

/** The tables whose digest differs between `before` and `after`. */
export function changedTables(before: Digest, after: Digest): string[] {
  return [...after].filter(([t, d]) => before.get(t) !== d).map(([t]) => t);
}
