/**
 * POST /bookings/hold-groups/{holdGroupId}/cancel: every hold of an ACTIVE group is released in one
 * transaction, each with its hold_cancelled, and their windows are freed with one promotion job.
 * The checks run in the contract's order: the group exists, is the caller's, is at a venue still the
 * caller's; then the idempotency key; then the group's state (CONFIRMED or CANCELLED:
 * INVALID_HOLD_STATE; past its hold_expiry_at, whether or not its expiry ran: HOLD_EXPIRED).
 */
import type { PgBoss } from 'pg-boss';
import { recordHoldEvents } from '../../db/rules/events.ts';
import { freeWindows } from '../../db/rules/free-window.ts';
import type { Knex } from '../../db/postgres/knex.ts';
import { transaction } from '../../db/postgres/transaction.ts';
import * as holdGroups from '../../db/queries/hold-groups.ts';
import * as holds from '../../db/queries/holds.ts';
import { HoldExpiredError, InvalidHoldStateError } from '../errors.ts';
import { sentRequest, withIdempotency, type IdempotentWrite, type WriteOutcome } from '../idempotency.ts';
import type { ChangeRequest } from './change-booking.ts';
import { lockOwnHoldGroup } from './own-records.ts';

/**
 * Releases the caller's group, or replays the release made with the same key, group and body
 * (`sent`, as the client sent it): the group as it was released.
 */
export async function releaseHoldGroup(
  { db, boss }: { db: Knex; boss: PgBoss },
  partnerId: string,
  holdGroupId: string,
  input: ChangeRequest,
  sent: unknown,
): Promise<WriteOutcome<holdGroups.HoldGroup>> {
  const write: IdempotentWrite = {
    partnerId,
    key: input.idempotency_key,
    operation: 'hold_group_release',
    ...sentRequest(sent, input, { holdGroupId }),
  };
  return transaction(db, async (trx) => {
    const group = await lockOwnHoldGroup(trx, partnerId, holdGroupId);
    return withIdempotency(
      trx,
      write,
      async () => {
        if (group.status === 'CONFIRMED' || group.status === 'CANCELLED') {
          throw new InvalidHoldStateError(
            `The hold group is ${group.status}; only an ACTIVE group can be released.`,
          );
        }
        if (group.expired)
          throw new HoldExpiredError('The hold group has expired; its windows are free already.');
        const released = await holds.cancelGroup(trx, group.id, input.reason ?? null);
        const ids = released.map((h) => h.id);
        await freeWindows(trx, boss, ids, await recordHoldEvents(trx, 'hold_cancelled', ids));
        await holdGroups.markCancelled(trx, group.id, input.reason ?? null);
        return (await holdGroups.find(trx, group.id))!;
      },
      holdGroups.holdGroupFromJson,
    );
  });
}
