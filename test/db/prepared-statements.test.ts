/**
 * Every parameterised statement runs as a named prepared statement (db/postgres/prepared-pg-client.ts).
 * A migration that changes a table read with `*` must not break a long-running process.
 */
import test from 'ava';
import { createDb } from '../../db/postgres/knex.ts';
import { transaction } from '../../db/postgres/transaction.ts';
import { useTestDatabase } from '../helpers/database.ts';

const database = useTestDatabase(test);

test('parameterised statements are prepared once per connection and reused', async (t) => {
  const db = createDb(database().url, { poolMax: 1 });
  try {
    for (let i = 0; i < 3; i++) await db.raw('select ?::int as n', [i]);
    const { rows } = await db.raw<{ rows: { n: number }[] }>(
      "select count(*)::int as n from pg_prepared_statements where statement like 'select $1::int as n%'",
    );
    t.is(rows[0]!.n, 1);
  } finally {
    await db.destroy();
  }
});

test('a statement reading a table whose columns a migration changed recovers on its own', async (t) => {
  const { db: admin } = database();
  await admin.raw('create table drift (id int primary key)');
  await admin('drift').insert({ id: 1 });
  const db = createDb(database().url, { poolMax: 1 });
  try {
    const read = () => db('drift').where({ id: 1 }).first();
    t.deepEqual(await read(), { id: 1 });
    await admin.raw('alter table drift add column note text');
    t.deepEqual(await read(), { id: 1, note: null }, 'outside a transaction: retried at once');

    await admin.raw("alter table drift add column extra text default 'x'");
    await t.throwsAsync(() => db.transaction((trx) => trx('drift').where({ id: 1 }).first()), {
      message: /cached plan must not change result type/,
    });
    const again = await db.transaction((trx) => trx('drift').where({ id: 1 }).first());
    t.deepEqual(again, { id: 1, note: null, extra: 'x' }, 'inside a transaction: the retry succeeds');

    // The service's transactions run again by themselves: a request after a deploy does not fail.
    await admin.raw('alter table drift add column third int default 3');
    const retried = await transaction(db, (trx) => trx('drift').where({ id: 1 }).first());
    t.deepEqual(retried, { id: 1, note: null, extra: 'x', third: 3 }, 'transaction(): run again at once');
  } finally {
    await db.destroy();
  }
});
