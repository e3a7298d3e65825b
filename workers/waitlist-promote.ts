/**
 * waitlist.promote: windows were freed (the payload names the events that freed them); for each,
 * the oldest waiting entry for its venue, resource and venue-local date is promoted to it, with a
 * waitlist_promoted event published in the same transaction. At most one entry per freed window,
 * however often or concurrently the job runs (see `promoteOldest`).
 */
import { WAITLIST_PROMOTE, type PayloadOf } from '../db/jobs/kinds.ts';
import * as waitlist from '../db/queries/waitlist-entries.ts';
import type { JobHandler } from './job-handler.ts';

export const waitlistPromote: JobHandler<PayloadOf<typeof WAITLIST_PROMOTE>> = {
  kind: WAITLIST_PROMOTE,
  batchSize: 10,
  pollingIntervalSeconds: 2,
  async handle({ event_id, event_ids }, { db, log }) {
    // Each window in a transaction of its own, in the order they were freed: a retry of the job
    // promotes nothing twice (promoteOldest() records each event's promotion once).
    for (const eventId of event_ids ?? [event_id!]) {
      const promoted = await db.transaction(async (trx) => {
        const window = await waitlist.freedWindow(trx, eventId);
        if (!window) return undefined;
        await waitlist.lockQueue(trx, window);
        return waitlist.promoteOldest(trx, window);
      });
      if (promoted) log.info({ event_id: eventId, entry_id: promoted.id }, 'waitlist entry promoted');
    }
  },
};
