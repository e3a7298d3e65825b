/**
 * cutWhenUnanswered (db/postgres/unanswered-statements.ts): a statement answered in time leaves
 * its connection alone; one unanswered for the bound cuts the connection's socket, with a warning;
 * the forms of `query()` knex does not use pass through untouched.
 */
import test from 'ava';
import { setTimeout as sleep } from 'node:timers/promises';
import type pg from 'pg';
import { cutWhenUnanswered } from '../../db/postgres/unanswered-statements.ts';
import { createLogger } from '../../db/platform/log.ts';

type Callback = (err: Error | null, result?: unknown) => void;

/** A pg.Client as far as the watch sees one: `query()` answering when told to, a socket to cut. */
function fakeConnection() {
  const pending: Callback[] = [];
  const calls: unknown[][] = [];
  let cut = 0;
  const conn = {
    query: (...args: unknown[]) => {
      calls.push(args);
      if (typeof args[1] === 'function') pending.push(args[1] as Callback);
      return 'sent';
    },
    connection: { stream: { destroy: () => void cut++ } },
  };
  return {
    conn: conn as unknown as pg.Client,
    calls,
    answer: (result: unknown) => pending.shift()!(null, result),
    cuts: () => cut,
  };
}

const log = createLogger('silent');

test('a statement answered in time keeps its connection, and its caller gets the answer', async (t) => {
  const fake = fakeConnection();
  cutWhenUnanswered(fake.conn, 50, log);
  let got: unknown;
  void fake.conn.query('select 1', ((_err: Error | null, result: unknown) => (got = result)) as never);
  fake.answer({ rows: [1] });
  await sleep(100);
  t.deepEqual(got, { rows: [1] });
  t.is(fake.cuts(), 0);
});

test('a statement unanswered for the bound cuts its connection once', async (t) => {
  const fake = fakeConnection();
  cutWhenUnanswered(fake.conn, 50, log);
  void fake.conn.query('select pg_sleep(100)', (() => undefined) as never);
  await sleep(20);
  t.is(fake.cuts(), 0);
  await sleep(80);
  t.is(fake.cuts(), 1);
});

test('the forms of query() knex does not use pass through, arguments and result alike', (t) => {
  const fake = fakeConnection();
  cutWhenUnanswered(fake.conn, 50, log);
  const callback = () => undefined;
  const query = (...args: unknown[]) =>
    (fake.conn as unknown as { query(...a: unknown[]): unknown }).query(...args);
  t.is(query('select $1', [1], callback), 'sent');
  t.is(query('select 1'), 'sent');
  t.deepEqual(fake.calls, [['select $1', [1], callback], ['select 1']]);
});
