/**
 * `runStatement()`: a statement on a pooled connection that answers as `db.raw` does (rows, types,
 * arrays, nulls, named prepared statements), is seen by knex's `query` listeners, stays inside a
 * transaction it is given, and fails with a message naming the statement but none of its values;
 * knex's own path words failures the same way.
 */
import test from 'ava';
import { createDb } from '../../db/postgres/knex.ts';
import { runStatement } from '../../db/postgres/statement.ts';
import { useTestDatabase } from '../helpers/database.ts';

const database = useTestDatabase(test);

const SQL = `select ?::integer as n, ?::text[] as names, ?::timestamptz as at, ?::uuid as none,
                    (select count(*)::integer from generate_series(1, ?::integer)) as counted`;
const BINDINGS = [7, ['a', 'b?', 'c'], new Date('2030-01-02T03:04:05Z'), null, 3];

test('answers exactly as db.raw does, as a named prepared statement', async (t) => {
  // One connection, so that pg_prepared_statements (one session's) is read on the connection that
  // ran the statement: with the shared pool, a test beside this one could leave another free.
  const db = createDb(database().url, { poolMax: 1 });
  t.teardown(() => db.destroy());
  const direct = await runStatement(db, SQL, BINDINGS);
  const viaKnex = await db.raw<{ rows: unknown[] }>(SQL, BINDINGS);
  t.deepEqual(direct.rows, viaKnex.rows);
  t.deepEqual(direct.rows[0], {
    n: 7,
    names: ['a', 'b?', 'c'],
    at: new Date('2030-01-02T03:04:05Z'),
    none: null,
    counted: 3,
  });
  const { rows } = await db.raw<{ rows: { n: number }[] }>(
    "select count(*)::integer as n from pg_prepared_statements where statement like '%generate_series(1, $5%'",
  );
  t.true(rows[0]!.n >= 1, 'prepared on the connection that ran it');
});

test("knex's query listeners see it, with its positioned SQL and bindings", async (t) => {
  const { db } = database();
  const seen: { sql: string; bindings: readonly unknown[] }[] = [];
  const listen = (query: { sql: string; bindings: readonly unknown[] }) => seen.push(query);
  db.on('query', listen);
  t.teardown(() => db.off('query', listen));
  await runStatement(db, 'select ?::integer + ?::integer as sum', [2, 3]);
  // Other tests of this file share the database: pick this one's statement.
  t.like(
    seen.find((query) => query.sql.includes(' as sum')),
    { sql: 'select $1::integer + $2::integer as sum', bindings: [2, 3] },
  );
});

test('inside a transaction it runs on the transaction, and sees what it wrote', async (t) => {
  const { db } = database();
  await db.transaction(async (trx) => {
    await trx.raw('create temporary table scratch (v text) on commit drop');
    await trx.raw('insert into scratch values (?)', ['inside']);
    const { rows } = await runStatement<{ v: string }>(trx, 'select v from scratch where v = ?', ['inside']);
    t.deepEqual(rows, [{ v: 'inside' }]);
  });
});

test('a failure names the statement, never a value it was given, on either path', async (t) => {
  const { db } = database();
  const secret = 'Priya Sharma +919812345678';
  const sql = 'select ?::text as name, 1 / ?::integer as boom';
  for (const run of [() => runStatement(db, sql, [secret, 0]), () => db.raw(sql, [secret, 0])]) {
    const err = await t.throwsAsync(run);
    t.regex(err.message, /division by zero/);
    t.regex(err.message, /select \$1::text as name/);
    t.false(err.message.includes(secret), err.message);
    t.is((err as { code?: string }).code, '22012');
  }
});

test('SQL only knex can position, and undefined bindings, go through knex as before', async (t) => {
  const { db } = database();
  const { rows } = await runStatement<{ id: number }>(db, 'select ?? from (select 1 as id) s', ['id']);
  t.deepEqual(rows, [{ id: 1 }]);
  await t.throwsAsync(() => runStatement(db, 'select ?::text as v', [undefined]), {
    message: /Undefined binding/,
  });
});
