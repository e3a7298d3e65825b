/**
 * waitlist.expire: at an entry's expires_at, a still-waiting entry becomes expired. A re-join moves
 * expires_at and schedules its own job, so the old job finds nothing to do (it names the expiry it
 * was scheduled for).
 */
import { WAITLIST_EXPIRE } from '../db/jobs/kinds.ts';
import * as waitlist from '../db/queries/waitlist-entries.ts';
import type { JobHandler } from './job-handler.ts';

/** Thrown when the job ran before its entry was due; pg-boss retries it. */
export class EntryNotDueError extends Error {}

export const waitlistExpire: JobHandler<{ entry_id: string; expires_at: string }> = {
  kind: WAITLIST_EXPIRE,
  batchSize: 20,
  // Scheduled jobs are found by polling; reads already show a lapsed entry as expired, so the
  // row may follow a little later.
  pollingIntervalSeconds: 2,
  async handle({ entry_id, expires_at }, { db, log }) {
    const outcome = await waitlist.expireIfDue(db, entry_id, new Date(expires_at));
    if (outcome === 'not-due') throw new EntryNotDueError(`waitlist entry ${entry_id} is not due yet`);
    log.debug({ entry_id, outcome }, 'waitlist.expire');
  },
};
