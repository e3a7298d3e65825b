/**
 * webhook.fanout: turns one recorded event into one delivery per active subscription that lists
 * its type, of every partner granted the event's venue at this moment (so partners hear about
 * other partners' changes too), and enqueues each delivery's first attempt, named and due now, in
 * the same transaction. Running twice creates nothing twice.
 */
import { enqueue } from '../db/jobs/enqueue.ts';
import { WEBHOOK_DELIVER, WEBHOOK_FANOUT } from '../db/jobs/kinds.ts';
import * as deliveries from '../db/queries/webhook-deliveries.ts';
import type { JobHandler } from './job-handler.ts';

export const webhookFanout: JobHandler<{ event_id: string }> = {
  kind: WEBHOOK_FANOUT,
  batchSize: 10,
  pollingIntervalSeconds: 0.5,
  concurrentBatch: true,
  localConcurrency: 2,
  async handle({ event_id }, { db, boss, config, log }) {
    const created = await db.transaction(async (trx) => {
      const created = await deliveries.fanOut(trx, event_id);
      for (const attempt of created) {
        await enqueue(boss, trx, WEBHOOK_DELIVER, attempt, { config });
      }
      return created.length;
    });
    log.debug({ event_id, deliveries: created }, 'webhook.fanout');
  },
};
