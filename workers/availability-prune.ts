/**
 * availability.prune: deletes availability changes older than AVAILABILITY_CHANGES_RETENTION_SECONDS
 * (prune_availability_changes()), batch after batch until a batch finds less than a batch, and logs
 * how many. Idempotent: a second run, or two at once, find less or nothing to delete.
 */
import { AVAILABILITY_PRUNE } from '../db/jobs/kinds.ts';
import { prune } from '../db/queries/availability-changes.ts';
import type { JobHandler } from './job-handler.ts';

/** Changes per statement: small enough that each delete holds its locks for milliseconds. */
export const AVAILABILITY_PRUNE_BATCH = 1000;

export const availabilityPrune: JobHandler<Record<string, unknown>> = {
  kind: AVAILABILITY_PRUNE,
  batchSize: 1,
  pollingIntervalSeconds: 30,
  async handle(_payload, { db, config, log }) {
    let deleted = 0;
    for (;;) {
      const batch = await prune(db, config.availabilityChangesRetentionSeconds, AVAILABILITY_PRUNE_BATCH);
      deleted += batch;
      if (batch < AVAILABILITY_PRUNE_BATCH) break;
    }
    log.info(
      { deleted, retention_seconds: config.availabilityChangesRetentionSeconds },
      'availability.prune',
    );
  },
};
