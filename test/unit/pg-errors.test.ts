/**
 * Telling an unavailable database from a wrong request: the error middleware answers 503 for the
 * first, and a wrong guess either way is a 500 where a retry would do, or a retry loop on a bug.
 */
import test from 'ava';
import pg from 'pg';
import {
  isDatabaseUnavailable,
  isDataException,
  isLostConnection,
  isTransientConflict,
} from '../../db/postgres/pg-errors.ts';

function databaseError(code: string, message = 'server said no'): pg.DatabaseError {
  const err = new pg.DatabaseError(message, 0, 'error');
  err.code = code;
  return err;
}

test('an outage, a restart or a timeout is unavailability, whatever wraps it', (t) => {
  for (const code of ['57P01', '57P02', '57P03', '08006', '53300', '57014', '55P03']) {
    t.true(isDatabaseUnavailable(databaseError(code)), code);
    t.true(isDatabaseUnavailable({ code, message: `${code} as pg-boss hands it on` }), `${code} plain`);
  }
  for (const code of ['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT']) {
    t.true(isDatabaseUnavailable(Object.assign(new Error('socket'), { code })), code);
  }
  t.true(isDatabaseUnavailable(new Error('Connection terminated unexpectedly')));
  t.true(
    isDatabaseUnavailable(
      Object.assign(new Error('Knex: Timeout acquiring a connection'), { name: 'KnexTimeoutError' }),
    ),
  );
  t.true(isDatabaseUnavailable(new Error('wrapped', { cause: databaseError('57P01') })));
  // A database an operator closed (ALTER DATABASE … ALLOW_CONNECTIONS false): it answered 500.
  const closed = 'database "booking" is not currently accepting connections';
  t.true(isDatabaseUnavailable(databaseError('55000', closed)));
  t.true(isDatabaseUnavailable({ code: '55000', message: closed }));
});

test('a wrong request or a bug is not unavailability', (t) => {
  for (const code of ['23505', '23P01', '42703', '22021', '40P01']) {
    t.false(isDatabaseUnavailable(databaseError(code)), code);
  }
  t.false(isDatabaseUnavailable(databaseError('55000', 'currval of sequence "s" is not yet defined')));
  t.false(isDatabaseUnavailable(new Error('something else')));
  t.false(isDatabaseUnavailable(undefined));
  t.true(isDataException(databaseError('22008')));
  t.false(isDataException(databaseError('23505')));
  t.true(isTransientConflict(databaseError('40P01')));
  t.true(isTransientConflict(databaseError('40001')));
  t.false(isTransientConflict(databaseError('23P01')));
  // A key stored first by a write that did not take its lock (the previous release's): run again.
  const duplicate = (constraint: string) => Object.assign(databaseError('23505'), { constraint });
  t.true(isTransientConflict(duplicate('idempotency_keys_pkey')));
  t.false(isTransientConflict(duplicate('partners_name_key')));
});

test('a lost connection is the session ended or the socket failed, not a failed statement or a timeout', (t) => {
  for (const code of ['57P01', '57P02', '57P03', '08006', 'ECONNRESET', 'EPIPE']) {
    t.true(isLostConnection(Object.assign(databaseError('00000'), { code })), code);
  }
  t.true(isLostConnection(new Error('Connection terminated unexpectedly')));
  // A statement that failed, or timed out, on a live connection; and what is not an Error at all.
  for (const code of ['57014', '55P03', '23505', '53300'])
    t.false(isLostConnection(databaseError(code)), code);
  t.false(isLostConnection(new Error('an ordinary bug')));
  t.false(isLostConnection({ code: '57P01', message: 'a plain object' }));
});
