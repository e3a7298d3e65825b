/**
 * Expiring a hold: the one transition that both the `hold.expire` job and a new hold on the same
 * window perform. The conditional update makes it happen at most once, so `hold_expired` is
 * recorded exactly once however late, often or concurrently expiry is attempted.
 */
import type { PgBoss } from 'pg-boss';
import { recordHoldEvent } from './events.ts';
import { freeWindow } from './free-window.ts';
import type { Knex } from '../postgres/knex.ts';
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
  await freeWindow(trx, boss, holdId, eventId);
  return expired;
}
