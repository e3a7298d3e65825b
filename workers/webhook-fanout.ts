/**
 * webhook.fanout: publishes one recorded event (`publish_event()`: one delivery per active
 * subscription that lists its type, of every partner granted the event's venue, each with its
 * first attempt queued). Events are published in the transaction that records them now
 * (db/rules/events.ts), so nothing sends this job any more; the handler stays for the jobs queued
 * by an earlier version before it was deployed. Running twice creates nothing twice.
 */
import { WEBHOOK_FANOUT } from '../db/jobs/kinds.ts';
import * as deliveries from '../db/queries/webhook-deliveries.ts';
import type { JobHandler } from './job-handler.ts';

export const webhookFanout: JobHandler<{ event_id: string }> = {
  kind: WEBHOOK_FANOUT,
  batchSize: 10,
  pollingIntervalSeconds: 2,
  async handle({ event_id }, { db, log }) {
    await deliveries.publish(db, [event_id]);
    log.debug({ event_id }, 'webhook.fanout');
  },
};
