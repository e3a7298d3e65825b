/**
 * The advisory lock `npm run migrate` holds from its first change to its last (knex migrations,
 * pg-boss schema and queues, SQL functions): a second migrate waits on it, and `web` and `worker`
 * starting on a database whose migrate is under way wait until it is released (waitForMigrations).
 */
import pg from 'pg';
import type { Config } from '../platform/config.ts';
import type { Knex } from '../postgres/knex.ts';

/** Arbitrary constant naming the migration advisory lock (the ASCII of "booking!"). */
const MIGRATION_LOCK_KEY = '7165064483209717537';

/**
 * Takes the migration lock on a connection of its own, waiting while another migrate holds it;
 * resolves to the function that releases it. In session mode it is a session lock. Behind a
 * transaction-pooling PgBouncer a session lock would stay on whichever server connection it landed
 * on, so there it is the transaction-scoped lock of a transaction left open until the release (the
 * pooler keeps the server connection ours until then), with no idle-in-transaction limit, as
 * migrations may take long.
 */
export async function takeMigrationLock(databaseUrl: string, poolMode: Config['databasePoolMode']) {
  const lock = new pg.Client({ connectionString: databaseUrl, application_name: 'booking-migrate' });
  await lock.connect();
  try {
    if (poolMode === 'transaction') {
      await lock.query(
        `begin; set local idle_in_transaction_session_timeout = 0; select pg_advisory_xact_lock(${MIGRATION_LOCK_KEY})`,
      );
    } else {
      await lock.query('select pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
    }
  } catch (err) {
    await lock.end();
    throw err;
  }
  return async () => {
    try {
      if (poolMode === 'transaction') await lock.query('commit');
    } finally {
      await lock.end();
    }
  };
}

/**
 * Whether a migrate holds the lock, asked inside `trx`: when it does not, the transaction takes the
 * lock shared and keeps it to its end, so no migrate starts changing the schema while `trx` reads
 * it. A try, never a wait: behind a transaction-pooling PgBouncer too.
 */
export async function migrationUnderWay(trx: Knex.Transaction): Promise<boolean> {
  const { rows } = await trx.raw<{ rows: { free: boolean }[] }>(
    'select pg_try_advisory_xact_lock_shared(?::bigint) as free',
    [MIGRATION_LOCK_KEY],
  );
  return !rows[0]!.free;
}
