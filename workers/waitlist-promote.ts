/**
 * waitlist.promote: a window was freed (the payload names the event that freed it); the oldest
 * waiting entry for its venue, resource and venue-local date is promoted to it, with a
 * waitlist_promoted event published in the same transaction. At most one entry per freed window,
 * however often or concurrently the job runs (see `promoteOldest`).
 */
import { WAITLIST_PROMOTE } from '../db/jobs/kinds.ts';
import * as waitlist from '../db/queries/waitlist-entries.ts';
import type { JobHandler } from './job-handler.ts';

export const waitlistPromote: JobHandler<{ event_id: string }> = {
  kind: WAITLIST_PROMOTE,
  batchSize: 10,
  pollingIntervalSeconds: 2,
  async handle({ event_id }, { db, log }) {
    const promoted = await db.transaction(async (trx) => {
      const window = await waitlist.freedWindow(trx, event_id);
      if (!window) return undefined;
      await waitlist.lockQueue(trx, window);
      return waitlist.promoteOldest(trx, window);
    });
    if (promoted) log.info({ event_id, entry_id: promoted.id }, 'waitlist entry promoted');
  },
};
