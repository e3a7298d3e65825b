/**
 * hold_group.expire: at a hold group's expiry, every hold of it still ACTIVE expires with its
 * hold_expired, and their windows are freed (db/rules/hold-expiry.ts, `expireGroupIfDue`): one job
 * for the group. Each hold expires exactly once, however late, often or concurrently this runs, and
 * whatever a new hold in the way expired before. The windows were free from hold_expiry_at on
 * anyway: a reservation past its hold's expiry blocks nobody.
 */
import { unserved } from '../db/platform/metrics.ts';
import { expireGroupIfDue } from '../db/rules/hold-expiry.ts';
import { HOLD_GROUP_EXPIRE, type PayloadOf } from '../db/jobs/kinds.ts';
import * as holdGroups from '../db/queries/hold-groups.ts';
import { RetryLaterError, type JobHandler } from './job-handler.ts';

export const holdGroupExpire: JobHandler<PayloadOf<typeof HOLD_GROUP_EXPIRE>> = {
  kind: HOLD_GROUP_EXPIRE,
  batchSize: 20,
  // Scheduled jobs are found by polling: as often as pg-boss allows, as for single holds.
  pollingIntervalSeconds: 0.5,
  async handle({ hold_group_id }, { db, boss, log, metrics = unserved }) {
    const expired = await db.transaction((trx) => expireGroupIfDue(trx, boss, hold_group_id));
    for (const hold of expired) {
      const lagMs = hold.expired_at!.getTime() - hold.hold_expiry_at.getTime();
      metrics.holdExpiryLag.observe(Math.max(0, lagMs) / 1000);
    }
    if (expired.length) {
      log.debug({ hold_group_id, holds: expired.length }, 'hold group expired');
      return;
    }
    const group = await holdGroups.find(db, hold_group_id);
    if (group && holdGroups.shownStatus(group) === 'ACTIVE') {
      throw new RetryLaterError(`hold group ${hold_group_id} is not due yet`);
    }
  },
};
