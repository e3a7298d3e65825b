/**
 * POST /bookings/hold-groups: one statement, `place_hold_group()` (db/queries/hold-groups.ts), which
 * refuses overlapping items, checks the venue grant, claims the idempotency key, judges every item
 * (its resource, the venue's rules, then — under the locks of every item's windows, taken in one
 * order — what is taken), and holds them all as one group with one expiry job, or raises a refusal,
 * leaving nothing behind. This module turns refusals into the API's errors and, as for a single hold
 * (create-hold.ts), handles the races an item can lose without its window being taken:
 *
 * - a hold past its expiry is in the way (its job has not run yet): it is expired here, with its
 *   group when it has one, and the group placed again;
 * - a transient conflict (a deadlock, an exclusion violation against a writer gone by now) runs the
 *   statement again.
 *
 * So a free window is never refused: TAKEN and TRANSFORMATION_CONFLICT are only ever the answer to
 * a live reservation.
 */
import type { PgBoss } from 'pg-boss';
import type { Knex } from '../../db/postgres/knex.ts';
import { EXCLUSION_VIOLATION, isPgError, refusalOf, type Refusal } from '../../db/postgres/pg-errors.ts';
import { RaceLost, retryLostRaces } from '../../db/postgres/transaction.ts';
import * as holdGroups from '../../db/queries/hold-groups.ts';
import { ServiceUnavailableError, ValidationError, VenueNotAuthorizedError } from '../errors.ts';
import {
  databaseWriteOutcome,
  fingerprint,
  sentRequest,
  type IdempotentWrite,
  type WriteOutcome,
} from '../idempotency.ts';
import { expireOverdueHolds } from './create-hold.ts';
import { itemsRefused, type FailingItem } from './item-refusals.ts';

/** A hold group, as the partner asked for it (the phone already in +91XXXXXXXXXX form). */
export interface HoldGroupRequest {
  venue_id: string;
  items: holdGroups.GroupItem[];
  customer_phone?: string | undefined;
  idempotency_key: string;
}

/**
 * Holds every item for `partnerId` as one group, or replays the group placed with the same key and
 * body (`sent`, as the client sent it): either way the group as it was placed.
 */
export async function createHoldGroup(
  deps: { db: Knex; boss: PgBoss },
  partnerId: string,
  input: HoldGroupRequest,
  sent: unknown,
): Promise<WriteOutcome<holdGroups.HoldGroup>> {
  const key = input.idempotency_key;
  const write: IdempotentWrite = { partnerId, key, operation: 'hold_group', ...sentRequest(sent, input) };
  try {
    return await retryLostRaces(async () => {
      try {
        const outcome = await holdGroups.place(deps.db, {
          partnerId,
          idempotencyKey: key,
          fingerprint: fingerprint(write.request),
          venueId: input.venue_id,
          items: input.items,
          customerPhone: input.customer_phone ?? null,
        });
        return databaseWriteOutcome(outcome, write, holdGroups.holdGroupFromJson);
      } catch (err) {
        const refusal = refusalOf(err);
        if (refusal?.reason === 'overdue') {
          await expireOverdueHolds(deps, refusal.detail!.split(','));
          throw new RaceLost('an overdue hold was in the way', { cause: err });
        }
        if (refusal) throw groupRefused(refusal);
        // Every writer of reservations locks its windows before reading them, so the constraint
        // (which has the last word) should never fire here; if it does, run again: the overlap
        // read then names what is live.
        if (isPgError(err, EXCLUSION_VIOLATION)) throw new RaceLost('an exclusion violation', { cause: err });
        throw err;
      }
    });
  } catch (err) {
    // Still losing races after every retry: the windows are contended, not taken. Ask for a retry.
    if (isPgError(err, EXCLUSION_VIOLATION) || refusalOf(err)?.reason === 'overdue') {
      throw new ServiceUnavailableError();
    }
    throw err;
  }
}

/** The API's error for a refusal of `place_hold_group()`. */
function groupRefused({ reason, detail }: Refusal): Error {
  switch (reason) {
    case 'items_overlap':
      return new ValidationError(
        detail!.split(',').map((j) => ({
          field: `items.${j}`,
          in: 'body' as const,
          message:
            'overlaps the window of an earlier item on the same resource, or on a resource sharing a part with it',
        })),
      );
    case 'venue_not_authorized':
      return new VenueNotAuthorizedError();
    case 'items_refused':
      return itemsRefused(
        'items',
        (JSON.parse(detail!) as { item: number; reason: string }[]).map(({ item, reason }): FailingItem => ({
          index: item,
          reason,
        })),
      );
    default:
      return new Error(`place_hold_group refused for an unknown reason: ${reason}`);
  }
}
