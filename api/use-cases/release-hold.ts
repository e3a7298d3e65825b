/**
 * POST /partner/holds/{holdId}/cancel: an ACTIVE hold is released before its expiry. A hold of a
 * group is released only with its group (HOLD_IN_GROUP, after the ownership, venue and key checks).
 */
import type { PgBoss } from 'pg-boss';
import { recordHoldEvent } from '../../db/rules/events.ts';
import { freeWindow } from '../../db/rules/free-window.ts';
import type { Knex } from '../../db/postgres/knex.ts';
import { transaction } from '../../db/postgres/transaction.ts';
import * as holds from '../../db/queries/holds.ts';
import { HoldExpiredError, HoldInGroupError, InvalidHoldStateError } from '../errors.ts';
import { withIdempotency, type WriteOutcome } from '../idempotency.ts';
import type { ChangeRequest } from './change-booking.ts';
import { lockOwnHold } from './own-records.ts';

/**
 * Releases the caller's hold, or replays the release made with the same key: the released hold as
 * it was then (idempotency.ts).
 */
export async function releaseHold(
  { db, boss }: { db: Knex; boss: PgBoss },
  partnerId: string,
  holdId: string,
  input: ChangeRequest,
): Promise<WriteOutcome<holds.HoldRow>> {
  const write = {
    partnerId,
    key: input.idempotency_key,
    operation: 'hold_release' as const,
    request: { holdId },
  };
  return transaction(db, (trx) =>
    withIdempotency(
      trx,
      write,
      async () => {
        const hold = await lockOwnHold(trx, partnerId, holdId);
        // A grouped hold is released only with its group, whatever its state.
        if (hold.hold_group_id) throw new HoldInGroupError(hold.hold_group_id);
        if (hold.expired) throw new HoldExpiredError();
        if (hold.status !== 'ACTIVE') {
          throw new InvalidHoldStateError(`The hold is ${hold.status}; only an ACTIVE hold can be released.`);
        }
        const cancelled = (await holds.cancel(trx, hold.id, input.reason ?? null))!;
        await freeWindow(trx, boss, hold.id, await recordHoldEvent(trx, 'hold_cancelled', cancelled.id));
        return cancelled;
      },
      holds.holdFromJson,
    ),
  );
}
