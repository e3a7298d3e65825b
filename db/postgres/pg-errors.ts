/**
 * PostgreSQL error codes (SQLSTATE) and connection failures that the service reacts to, named
 * once. Use cases translate them into domain errors, the error middleware into statuses; nothing
 * else inspects `err.code`.
 */
import pg from 'pg';

/** 23505: a unique index already holds the key. */
const UNIQUE_VIOLATION = '23505';
/** 23P01: an exclusion constraint found an overlapping row (two reservations of one unit). */
export const EXCLUSION_VIOLATION = '23P01';
/** 40P01: the server aborted this transaction to break a deadlock. */
export const DEADLOCK_DETECTED = '40P01';
/** 40001: a serializable (or repeatable read) transaction lost to a concurrent one. */
export const SERIALIZATION_FAILURE = '40001';
/** 57014: the statement was cancelled, here by `statement_timeout`. */
export const QUERY_CANCELED = '57014';
/** 55P03: a lock was not granted within `lock_timeout`. */
export const LOCK_NOT_AVAILABLE = '55P03';
/**
 * PB000, our own: a database function refused the request (`raise exception using errcode =
 * 'PB000', message = '<reason>'`), rolling back what it had done. Read with `refusalOf()`.
 */
const REFUSAL = 'PB000';
/** 0A000: here, a prepared statement whose result type a migration changed. */
const FEATURE_NOT_SUPPORTED = '0A000';

/** A database function's refusal: its reason word, and what it added (the `detail`). */
export interface Refusal {
  reason: string;
  detail: string | undefined;
}

/** The refusal `err` carries, or undefined when it is any other error. */
export function refusalOf(err: unknown): Refusal | undefined {
  if (!isPgError(err, REFUSAL)) return undefined;
  // knex puts the statement in front of the server's message: "<sql> - <reason>".
  return { reason: err.message.split(' - ').pop()!, detail: err.detail };
}

/**
 * SQLSTATE classes and codes that mean the database cannot serve right now, not that the request
 * is wrong: 08 connection exception, 53 insufficient resources (too many connections), 57P01–57P03
 * (the server is shutting down, crashed, or not yet accepting connections), a database closed to
 * connections (55000, below), and the two timeouts the service sets on its own connections.
 */
const CONNECTION_EXCEPTION_CLASS = '08';
const UNAVAILABLE_CLASSES = [CONNECTION_EXCEPTION_CLASS, '53'];
/** The server ended the session: administrator command, crash, or shutdown (57P01–57P03). */
const SESSION_ENDED_CODES = new Set(['57P01', '57P02', '57P03']);
const UNAVAILABLE_CODES = new Set([...SESSION_ENDED_CODES, QUERY_CANCELED, LOCK_NOT_AVAILABLE]);
/**
 * 55000 object not in prerequisite state: among other things, the refusal of a connection to a
 * database an operator closed (`ALTER DATABASE … ALLOW_CONNECTIONS false`, a maintenance window),
 * which is an outage like any other; told apart by its message.
 */
const NOT_IN_PREREQUISITE_STATE = '55000';
const CLOSED_DATABASE = /is not currently accepting connections/;

/** A five-character SQLSTATE, as opposed to node's socket error codes (ECONNREFUSED …). */
const SQLSTATE = /^[0-9A-Z]{5}$/;

/** Socket-level failures of a connection to the server (node's `err.code`). */
const SOCKET_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
]);

/**
 * Messages of node-postgres and knex for a connection that died or never came, which carry no code:
 * a server restart ends idle and busy connections alike, and a full pool times out its waiters.
 */
const CONNECTION_MESSAGES =
  /Connection terminated|connection timeout|timeout exceeded when trying to connect|not queryable|Timeout acquiring a connection|Client was closed|Connection ended/i;

/** Whether `err` is a server error with the given SQLSTATE (and constraint name, if given). */
export function isPgError(err: unknown, code: string, constraint?: string): err is pg.DatabaseError {
  if (!(err instanceof pg.DatabaseError) || err.code !== code) return false;
  return constraint === undefined || err.constraint === constraint;
}

/**
 * A transaction that lost to a concurrent one (deadlock or serialization failure): nothing was
 * wrong with it, and running it again is the answer. So is a keyed write whose key another
 * transaction stored first: a write of the previous release, which claims keys without their lock
 * (db/functions/lock_idempotency_key.sql); run again, it finds the key and replays what that one did.
 */
export function isTransientConflict(err: unknown): boolean {
  return (
    isPgError(err, DEADLOCK_DETECTED) ||
    isPgError(err, SERIALIZATION_FAILURE) ||
    isPgError(err, UNIQUE_VIOLATION, 'idempotency_keys_pkey')
  );
}

/**
 * 0A000 "cached plan must not change result type": a named prepared statement outlived a migration
 * that changed what it returns (db/postgres/prepared-pg-client.ts). The client has already renamed
 * it on that connection, so the statement's next use prepares it afresh: running the transaction
 * again is the answer.
 */
export function isStalePreparedStatement(err: unknown): boolean {
  return (
    isPgError(err, FEATURE_NOT_SUPPORTED) &&
    /cached plan must not change result type/.test((err as Error).message)
  );
}

/**
 * SQLSTATE class 22, data exception: a value PostgreSQL refused (U+0000 in text, a year it cannot
 * store, a number out of range). Input validation should have refused it first.
 */
export function isDataException(err: unknown): err is pg.DatabaseError {
  return err instanceof pg.DatabaseError && typeof err.code === 'string' && err.code.startsWith('22');
}

/**
 * The connection itself died (the server ended the session, or its socket failed), as a pg client
 * reports it in an `'error'` event: not a statement that failed on a live connection.
 */
export function isLostConnection(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string')
    return (
      SOCKET_CODES.has(code) || SESSION_ENDED_CODES.has(code) || code.startsWith(CONNECTION_EXCEPTION_CLASS)
    );
  return /^Connection terminated/.test(err.message);
}

/**
 * The database cannot serve now — unreachable, restarting, out of connections, or past a timeout
 * the service set — as opposed to a request or code that is wrong. Looks through `cause` chains,
 * as knex and pg-boss wrap what the driver threw.
 */
export function isDatabaseUnavailable(err: unknown): boolean {
  for (let e: unknown = err, depth = 0; e && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && SOCKET_CODES.has(code)) return true; // before: EPIPE has 5 letters
    // By shape, not class: pg-boss hands on the driver's errors as plain objects.
    if (typeof code === 'string' && SQLSTATE.test(code)) {
      if (code === NOT_IN_PREREQUISITE_STATE)
        return CLOSED_DATABASE.test(String((e as { message?: unknown }).message));
      return UNAVAILABLE_CODES.has(code) || UNAVAILABLE_CLASSES.includes(code.slice(0, 2));
    }
    if ((e as { name?: unknown }).name === 'KnexTimeoutError') return true;
    if (e instanceof Error && CONNECTION_MESSAGES.test(e.message)) return true;
  }
  return false;
}
