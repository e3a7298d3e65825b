/**
 * The knex instance both edges use. One pool per process; its size is the measured sweet spot for
 * this machine class (DESIGN.md: 8–10 connections per web process).
 */
import knexFactory, { type Knex } from 'knex';
import pg from 'pg';
import type { Logger } from './log.ts';
import { PreparedPgClient } from './prepared-pg-client.ts';

export type { Knex };

/** PostgreSQL `date` (OID 1082) stays the text PostgreSQL sent: a calendar date has no time zone. */
pg.types.setTypeParser(pg.types.builtins.DATE, (value) => value);
/** `bigint` counts fit easily in a JS number here (row counts, epoch milliseconds). */
pg.types.setTypeParser(pg.types.builtins.INT8, (value) => Number(value));

/** Options for {@link createDb}. */
export interface DbOptions {
  poolMax?: number;
  /** Shown in pg_stat_activity, so an operator can tell web, worker and CLI connections apart. */
  applicationName?: string;
  log?: Logger;
}

/** Creates a knex instance on `databaseUrl`; the caller destroys it on shutdown. */
export function createDb(databaseUrl: string, options: DbOptions = {}): Knex {
  const log = options.log;
  return knexFactory({
    client: PreparedPgClient as unknown as typeof knexFactory.Client,
    // knex's own messages (pool acquire failures, deprecations) go to our logger, not the console.
    log: {
      warn: (message: unknown) => log?.warn({ knex: String(message) }, 'knex warning'),
      error: (message: unknown) => log?.error({ knex: String(message) }, 'knex error'),
      deprecate: (message: unknown) => log?.warn({ knex: String(message) }, 'knex deprecation'),
      debug: () => undefined,
    },
    connection: { connectionString: databaseUrl, application_name: options.applicationName ?? 'booking' },
    pool: {
      min: 0,
      max: options.poolMax ?? 10,
      // A connection that dies while idle (server restart, network cut) must not crash the process.
      afterCreate(conn: pg.Client, done: (err: Error | null, conn: pg.Client) => void) {
        conn.on('error', (err) => log?.warn({ err: err.message }, 'database connection error'));
        done(null, conn);
      },
    },
  });
}

/** Inserts one row into `table` and returns the id PostgreSQL gave it. */
export async function insertReturningId(
  db: Knex,
  table: string,
  row: Record<string, unknown>,
): Promise<string> {
  const [inserted] = await db(table).insert(row).returning<{ id: string }[]>('id');
  if (!inserted) throw new Error(`insert into ${table} returned no row`);
  return inserted.id;
}
