/**
 * hold.expire: at a hold's expiry, frees its window and records hold_expired — exactly once,
 * whether the job runs late, twice, or after a new hold already expired the hold and reused the
 * window (the transition is a conditional update in `db/rules/hold-expiry.ts`).
 */
import { unserved } from '../db/platform/metrics.ts';
import { expireHoldIfDue } from '../db/rules/hold-expiry.ts';
import { HOLD_EXPIRE } from '../db/jobs/kinds.ts';
import * as holds from '../db/queries/holds.ts';
import { RetryLaterError, type JobHandler } from './job-handler.ts';

/** Thrown when the job ran before its hold was due; pg-boss retries it. */
export class HoldNotDueError extends RetryLaterError {}

export const holdExpire: JobHandler<{ hold_id: string }> = {
  kind: HOLD_EXPIRE,
  batchSize: 20,
  // Expiry jobs are scheduled (startAfter), which pg-boss finds only by polling: poll as often as
  // it allows, so hold_expired follows hold_expiry_at by well under a second.
  pollingIntervalSeconds: 0.5,
  async handle({ hold_id }, { db, boss, log, metrics = unserved }) {
    // The transition is a conditional update, so no lock is needed first; only when it did not
    // happen is the hold read, to tell "settled already" from "not due yet".
    const expired = await db.transaction((trx) => expireHoldIfDue(trx, boss, hold_id));
    if (expired) {
      // Both moments are the database clock's: expired_at is the update's now().
      const lagMs = expired.expired_at!.getTime() - expired.hold_expiry_at.getTime();
      metrics.holdExpiryLag.observe(Math.max(0, lagMs) / 1000);
      log.debug({ hold_id }, 'hold expired');
      return;
    }
    const hold = await holds.findById(db, hold_id);
    if (hold?.status === 'ACTIVE') throw new HoldNotDueError(`hold ${hold_id} is not due yet`);
  },
};
