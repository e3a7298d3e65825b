/**
 * Expiring a hold: the one transition that both the `hold.expire` job (`hold_group.expire` for a
 * group's holds) and a new hold on the same window perform. The conditional update makes it happen
 * at most once, so `hold_expired` is recorded exactly once however late, often or concurrently
 * expiry is attempted, and dated at the hold's `hold_expiry_at` however late it is recorded.
 */
import type { PgBoss } from 'pg-boss';
import { recordHoldEvent, recordHoldEvents } from './events.ts';
import { freeWindow, freeWindows } from './free-window.ts';
import type { Knex } from '../postgres/knex.ts';
import { dateAtHoldExpiry } from '../queries/events.ts';
import * as holdGroups from '../queries/hold-groups.ts';
import * as holds from '../queries/holds.ts';

/** Expires the hold if it is ACTIVE and due; the expired hold if this call expired it. */
export async function expireHoldIfDue(
  trx: Knex.Transaction,
  boss: PgBoss,
  holdId: string,
): Promise<holds.HoldRow | undefined> {
  const expired = await holds.expireIfDue(trx, holdId);
  if (!expired) return undefined;
  const eventId = await recordHoldEvent(trx, 'hold_expired', expired.id);
  await dateAtHoldExpiry(trx, [eventId]);
  await freeWindow(trx, boss, holdId, eventId);
  return expired;
}

/**
 * Expires a hold group at its hold_expiry_at: every hold of it still ACTIVE expires with its
 * hold_expired, and their windows are freed with one promotion job; the group becomes EXPIRED. The
 * holds expired by this call (none when the group is not due, or was expired before). The group is
 * locked first, as its confirm and release lock it, so an expiry and a confirm racing at
 * hold_expiry_at queue rather than deadlock.
 */
export async function expireGroupIfDue(
  trx: Knex.Transaction,
  boss: PgBoss,
  groupId: string,
): Promise<holds.HoldRow[]> {
  await holdGroups.lock(trx, groupId);
  const expired = await holds.expireDueInGroup(trx, groupId);
  const ids = expired.map((h) => h.id);
  const eventIds = await recordHoldEvents(trx, 'hold_expired', ids);
  await dateAtHoldExpiry(trx, eventIds);
  await freeWindows(trx, boss, ids, eventIds);
  await holdGroups.expireIfDue(trx, groupId);
  return expired;
}

/**
 * Expires a hold found past its expiry in a new hold's way, as its job would: a single hold alone,
 * a grouped hold with its whole group (a group expires as one).
 */
export async function expireOverdueHold(trx: Knex.Transaction, boss: PgBoss, holdId: string): Promise<void> {
  const hold = await holds.findById(trx, holdId);
  if (hold?.hold_group_id) await expireGroupIfDue(trx, boss, hold.hold_group_id);
  else await expireHoldIfDue(trx, boss, holdId);
}
