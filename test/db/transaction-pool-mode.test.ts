/**
 * DATABASE_POOL_MODE=transaction (db/postgres/transaction-pooling-client.ts) on a direct connection:
 * every statement, in a transaction or not, runs under the settings session mode gives at startup,
 * and nothing is left on the connection: no setting, no prepared statement, no open transaction.
 * (Through a real PgBouncer: test/pgbouncer.test.ts.)
 */
import test from 'ava';
import type pg from 'pg';
import { createDb, type Knex } from '../../db/postgres/knex.ts';
import { useTestDatabase } from '../helpers/database.ts';

const database = useTestDatabase(test);

const SETTINGS_SQL = `select current_setting('statement_timeout') as statement_timeout,
  current_setting('lock_timeout') as lock_timeout,
  current_setting('idle_in_transaction_session_timeout') as idle_timeout,
  ?::int as n`;

/** A one-connection pool in transaction mode with every setting, destroyed after the test. */
function transactionModeDb(t: { teardown(fn: () => Promise<void>): void }): Knex {
  const db = createDb(database().url, {
    poolMax: 1,
    poolMode: 'transaction',
    statementTimeoutMs: 400,
    lockTimeoutMs: 300,
  });
  t.teardown(() => db.destroy());
  return db;
}

/** What the one pooled connection carries between transactions. */
async function sessionState(db: Knex) {
  const connection = (await db.client.acquireConnection()) as pg.Client;
  try {
    const { rows } = await connection.query(
      `select current_setting('statement_timeout') as statement_timeout,
              current_setting('lock_timeout') as lock_timeout,
              (select count(*)::int from pg_prepared_statements) as prepared,
              now() = statement_timestamp() as outside_transaction`,
    );
    return rows[0] as Record<string, unknown>;
  } finally {
    db.client.releaseConnection(connection);
  }
}

const EXPECTED = {
  statement_timeout: '400ms',
  lock_timeout: '300ms',
  idle_timeout: '1min',
  n: 1,
};

test('statements alone and in transactions run under the settings, and leave nothing on the connection', async (t) => {
  const db = transactionModeDb(t);
  const { rows: alone } = await db.raw(SETTINGS_SQL, [1]);
  t.deepEqual(alone, [EXPECTED]);
  const inTransaction = await db.transaction(async (trx) => {
    await trx.raw('select ?::int', [2]);
    return (await trx.raw(SETTINGS_SQL, [1])).rows as unknown[];
  });
  t.deepEqual(inTransaction, [EXPECTED]);
  // Nested transactions are savepoints of the outer one, under its settings.
  const nested = await db.transaction((outer) =>
    outer.transaction(async (inner) => (await inner.raw(SETTINGS_SQL, [1])).rows as unknown[]),
  );
  t.deepEqual(nested, [EXPECTED]);
  t.like(await sessionState(db), {
    statement_timeout: '0',
    lock_timeout: '0',
    prepared: 0,
    outside_transaction: true,
  });
});

test('the statement and lock timeouts hold, alone and in transactions', async (t) => {
  const db = transactionModeDb(t);
  await t.throwsAsync(() => db.raw('select pg_sleep(?)', [2]), { code: '57014' });
  await t.throwsAsync(() => db.transaction((trx) => trx.raw('select pg_sleep(?)', [2])), { code: '57014' });
  const { db: other } = database();
  const holder = await other.transaction();
  try {
    await holder.raw('select pg_advisory_xact_lock(?)', [4242]);
    await t.throwsAsync(() => db.raw('select pg_advisory_xact_lock(?)', [4242]), { code: '55P03' });
  } finally {
    await holder.rollback();
  }
  t.like(
    await sessionState(db),
    { outside_transaction: true },
    'a failed statement leaves no transaction open',
  );
});

test('a failed statement alone leaves no transaction open; the connection serves the next one', async (t) => {
  const db = transactionModeDb(t);
  await db.raw('create table pool_mode_probe (n int primary key)');
  await t.throwsAsync(() => db.raw('insert into pool_mode_probe values (?), (?)', [1, 1]), { code: '23505' });
  t.like(await sessionState(db), { outside_transaction: true });
  await db.raw('insert into pool_mode_probe values (?)', [2]);
  t.deepEqual(await db('pool_mode_probe').pluck('n'), [2]);
});

test('without settings the plain client runs statements as they are', async (t) => {
  const db = createDb(database().url, { poolMax: 1, poolMode: 'transaction' });
  t.teardown(() => db.destroy());
  t.deepEqual((await db.raw('select ?::int as n', [3])).rows, [{ n: 3 }]);
  t.like(await sessionState(db), { prepared: 0, outside_transaction: true });
});
