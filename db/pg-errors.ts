/**
 * PostgreSQL error codes (SQLSTATE) that the service reacts to, named once. Use cases translate
 * them into domain errors; nothing else inspects `err.code`.
 */
import pg from 'pg';

/** 23P01: an exclusion constraint found an overlapping row (two reservations of one unit). */
export const EXCLUSION_VIOLATION = '23P01';
/** 40P01: the server aborted this transaction to break a deadlock. */
export const DEADLOCK_DETECTED = '40P01';

/** Whether `err` is a server error with the given SQLSTATE (and constraint name, if given). */
export function isPgError(err: unknown, code: string, constraint?: string): err is pg.DatabaseError {
  if (!(err instanceof pg.DatabaseError) || err.code !== code) return false;
  return constraint === undefined || err.constraint === constraint;
}
