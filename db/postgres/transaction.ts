/**
 * Transactions that lose to a concurrent one through no fault of their own — a deadlock the server
 * broke by aborting this side (40P01), a serialization failure (40001), or a caller-detected race
 * such as an exclusion violation whose rival is gone on a second look — are run again, a bounded
 * number of times, after a short random pause so the rivals do not collide again in step. So is
 * a transaction that met a prepared statement a migration made stale (0A000): the statement is
 * prepared afresh on the next attempt, and the request does not fail for a deploy. A
 * rolled-back attempt leaves nothing behind (idempotency keys included), so running it again is
 * safe. What still fails after the last attempt is thrown as it came.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Knex } from './knex.ts';
import { isStalePreparedStatement, isTransientConflict } from './pg-errors.ts';

/** Attempts in all, the first included. Deadlock detection alone takes `deadlock_timeout` (1 s). */
const ATTEMPTS = 5;
/** The pause before attempt n (n ≥ 2) is random in [0, BASE · 2^(n-2)) milliseconds. */
const BASE_PAUSE_MS = 10;

/** Thrown by a caller to say "this attempt lost a race that is now over; run it again". */
export class RaceLost extends Error {}

/** Runs `attempt` until it succeeds, fails for a reason other than a lost race, or runs out of tries. */
export async function retryLostRaces<T>(attempt: () => Promise<T>): Promise<T> {
  for (let n = 1; ; n++) {
    try {
      return await attempt();
    } catch (err) {
      const lost = err instanceof RaceLost || isTransientConflict(err) || isStalePreparedStatement(err);
      if (!lost || n >= ATTEMPTS) throw err instanceof RaceLost && err.cause ? err.cause : err;
      await sleep(Math.random() * BASE_PAUSE_MS * 2 ** (n - 1));
    }
  }
}

/** `db.transaction(work)`, run again when it loses a race (see {@link retryLostRaces}). */
export function transaction<T>(db: Knex, work: (trx: Knex.Transaction) => Promise<T>): Promise<T> {
  return retryLostRaces(() => db.transaction(work));
}
