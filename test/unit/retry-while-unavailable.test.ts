/**
 * A start-up step the database drops in the middle of (pg-boss's first queries, a worker's
 * subscriptions) is tried again: a web or worker whose connection was cut just after the database
 * first answered stopped with "could not start".
 */
import test from 'ava';
import { createLogger } from '../../db/platform/log.ts';
import { retryWhileUnavailable } from '../../db/postgres/wait-for-database.ts';

const log = createLogger('silent');
const terminated = () =>
  Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' });

test('a step the database dropped is tried again until it succeeds', async (t) => {
  let tries = 0;
  const value = await retryWhileUnavailable(
    () => (++tries < 3 ? Promise.reject(terminated()) : Promise.resolve('started')),
    log,
    'starting',
  );
  t.is(value, 'started');
  t.is(tries, 3);
});

test('any other failure stops at once, and an abort ends the wait', async (t) => {
  let tries = 0;
  await t.throwsAsync(
    retryWhileUnavailable(
      () => {
        tries++;
        return Promise.reject(new Error('pg-boss is not installed'));
      },
      log,
      'starting',
    ),
    { message: 'pg-boss is not installed' },
  );
  t.is(tries, 1);
  const abort = new AbortController();
  const waiting = retryWhileUnavailable(() => Promise.reject(terminated()), log, 'starting', abort.signal);
  abort.abort();
  await t.throwsAsync(waiting, { name: 'AbortError' });
});
