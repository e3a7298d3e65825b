/**
 * webhook.fanout: turns one recorded event into one delivery per active subscription that lists
 * its type, of every partner granted the event's venue at this moment (so partners hear about
 * other partners' changes too), and enqueues each delivery's first attempt, named and due now, in
 * the same transaction. Running twice creates nothing twice.
 */
import { deliveryJobOptions, enqueue, JOBS, PAYLOADS } from '../db/jobs/jobs.ts';
import * as deliveries from '../db/queries/webhook-deliveries.ts';
import type { JobModule } from './registry.ts';

export const webhookFanout: JobModule<{ event_id: string }> = {
  name: JOBS.webhookFanout,
  payload: PAYLOADS[JOBS.webhookFanout],
  batchSize: 10,
  pollingIntervalSeconds: 0.5,
  concurrentBatch: true,
  localConcurrency: 2,
  async handle({ event_id }, { db, boss, config, log }) {
    const created = await db.transaction(async (trx) => {
      const created = await deliveries.fanOut(trx, event_id);
      for (const attempt of created) {
        await enqueue(boss, trx, JOBS.webhookDeliver, attempt, deliveryJobOptions(config));
      }
      return created.length;
    });
    log.debug({ event_id, deliveries: created }, 'webhook.fanout');
  },
};
