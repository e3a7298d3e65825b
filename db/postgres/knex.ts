/**
 * The knex instance both edges use. One pool per process; the web's size is its configuration's
 * (WEB_DATABASE_POOL_SIZE, default 6: the measured sweet spot, db/platform/config.ts).
 */
import knexFactory, { type Knex } from 'knex';
import pg from 'pg';
import type { Logger } from '../platform/log.ts';
import { PreparedPgClient } from './prepared-pg-client.ts';
import { transactionPoolingClient } from './transaction-pooling-client.ts';
import { ANSWER_MARGIN_MS, cutWhenUnanswered } from './unanswered-statements.ts';

export type { Knex };

/** PostgreSQL `date` (OID 1082) stays the text PostgreSQL sent: a calendar date has no time zone. */
pg.types.setTypeParser(pg.types.builtins.DATE, (value) => value);
/** `bigint` counts fit easily in a JS number here (row counts, epoch milliseconds). */
pg.types.setTypeParser(pg.types.builtins.INT8, (value) => Number(value));

/** How long a connection may take to open before the attempt fails (a host that does not answer). */
const CONNECT_TIMEOUT_MS = 5_000;
/** How long a caller waits for a pooled connection before failing (every connection busy or dead). */
const ACQUIRE_TIMEOUT_MS = 10_000;

/** Options for {@link createDb}. */
export interface DbOptions {
  poolMax?: number;
  /** Shown in pg_stat_activity, so an operator can tell web, worker and CLI connections apart. */
  applicationName?: string;
  log?: Logger;
  /**
   * Server-side limits for every statement of these connections (ms; 0 or absent: none). A
   * statement past `statementTimeoutMs`, or a lock not granted within `lockTimeoutMs`, fails with
   * 57014 or 55P03 instead of holding its pool slot; a transaction left idle for longer than the
   * statement timeout (and at least a minute) is ended by the server.
   */
  statementTimeoutMs?: number;
  lockTimeoutMs?: number;
  /**
   * `transaction` (DATABASE_POOL_MODE): the connections may be a transaction-pooling PgBouncer's,
   * so they carry nothing between transactions: no named statement, no startup parameter beyond
   * user, database and application_name, the settings above by SET LOCAL in every transaction
   * (db/postgres/transaction-pooling-client.ts). Default `session`.
   */
  poolMode?: 'session' | 'transaction';
}

/** Creates a knex instance on `databaseUrl`; the caller destroys it on shutdown. */
export function createDb(databaseUrl: string, options: DbOptions = {}): Knex {
  const log = options.log;
  const transactionMode = options.poolMode === 'transaction';
  const settings = serverSettings(options);
  return knexFactory({
    client: (transactionMode
      ? transactionPoolingClient(settings)
      : PreparedPgClient) as typeof knexFactory.Client,
    // knex's own messages (pool acquire failures, deprecations) go to our logger, not the console.
    log: {
      warn: (message: unknown) => log?.warn({ knex: String(message) }, 'knex warning'),
      error: (message: unknown) => log?.error({ knex: String(message) }, 'knex error'),
      deprecate: (message: unknown) => log?.warn({ knex: String(message) }, 'knex deprecation'),
      debug: () => undefined,
    },
    connection: {
      connectionString: databaseUrl,
      application_name: options.applicationName ?? 'booking',
      connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
      ...(transactionMode ? { pipeline: Object.keys(settings).length > 0 } : sessionStartup(settings)),
    },
    acquireConnectionTimeout: ACQUIRE_TIMEOUT_MS,
    // A failed statement's message names the statement, never its values: knex would write every
    // binding into it (customers' names and phones), and error messages are logged.
    compileSqlOnError: false,
    pool: {
      min: 0,
      max: options.poolMax ?? 10,
      // A connection that dies while idle (server restart, network cut) must not crash the process.
      afterCreate(conn: pg.Client, done: (err: Error | null, conn: pg.Client) => void) {
        conn.on('error', (err) => log?.warn({ err: err.message }, 'database connection error'));
        // With a statement timeout, no answer well after it means the server is out of reach.
        if (options.statementTimeoutMs) {
          cutWhenUnanswered(conn, options.statementTimeoutMs + ANSWER_MARGIN_MS, log);
        }
        done(null, conn);
      },
    },
  });
}

/** The settings every statement of these connections runs under, by their PostgreSQL names. */
function serverSettings(options: DbOptions): Record<string, number> {
  const { statementTimeoutMs, lockTimeoutMs } = options;
  const settings: Record<string, number> = {};
  if (statementTimeoutMs) {
    settings.statement_timeout = statementTimeoutMs;
    settings.idle_in_transaction_session_timeout = Math.max(statementTimeoutMs, 60_000);
  }
  if (lockTimeoutMs) settings.lock_timeout = lockTimeoutMs;
  return settings;
}

/** Session mode gives the settings once per connection, as startup parameters. */
function sessionStartup(settings: Record<string, number>): Record<string, string | number> {
  return settings;
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
