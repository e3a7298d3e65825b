/**
 * retention.prune: deletes the history older than RETENTION_DAYS (db/queries/retention.ts), batch
 * after batch until a batch finds nothing, and logs what it deleted. Idempotent: a second run, or
 * two at once, find less or nothing to delete.
 */
import { RETENTION_PRUNE } from '../db/jobs/kinds.ts';
import { pruneBatch, type PrunedBatch } from '../db/queries/retention.ts';
import type { JobHandler } from './job-handler.ts';

/** Rows per table per statement: small enough that each delete holds its locks for milliseconds. */
export const RETENTION_BATCH = 1000;

export const retentionPrune: JobHandler<Record<string, unknown>> = {
  kind: RETENTION_PRUNE,
  batchSize: 1,
  pollingIntervalSeconds: 30,
  async handle(_payload, { db, config, log }) {
    const cutoff = new Date(Date.now() - config.retentionDays * 86_400_000);
    const total: PrunedBatch = { webhook_attempts: 0, webhook_deliveries: 0, events: 0, idempotency_keys: 0 };
    for (;;) {
      const batch = await pruneBatch(db, cutoff, RETENTION_BATCH);
      for (const table of Object.keys(total) as (keyof PrunedBatch)[]) total[table] += batch[table];
      if (Object.values(batch).every((n) => n < RETENTION_BATCH)) break;
    }
    log.info({ cutoff: cutoff.toISOString(), deleted: total }, 'retention.prune');
  },
};
