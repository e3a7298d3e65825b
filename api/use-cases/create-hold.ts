/**
 * POST /bookings/hold: one statement, `place_hold()` (db/queries/holds.ts), which claims the
 * idempotency key, checks the venue grant, the resource, the grid and booking rules, prices the
 * hold, orders itself behind writers of overlapping windows, and inserts the hold, its
 * reservations, hold_created and the expiry job — or raises a refusal, leaving nothing behind. This
 * module turns refusals into the API's errors and handles the two races a hold can lose without
 * the window being taken:
 *
 * - a hold past its expiry is in the way (its job has not run yet): it is expired here, as its job
 *   would, and the hold placed again;
 * - the exclusion constraint refused the insert although the overlap read found nothing: a second
 *   look tells a live rival (409) from one already gone (run again).
 *
 * A free window is never refused: 409 is only ever the answer to a live overlapping reservation.
 */
import type { PgBoss } from 'pg-boss';
import { expireOverdueHold } from '../../db/rules/hold-expiry.ts';
import type { Knex } from '../../db/postgres/knex.ts';
import { EXCLUSION_VIOLATION, isPgError, refusalOf, type Refusal } from '../../db/postgres/pg-errors.ts';
import * as holds from '../../db/queries/holds.ts';
import * as reservations from '../../db/queries/reservations.ts';
import * as resources from '../../db/queries/resources.ts';
import { RaceLost, retryLostRaces, transaction } from '../../db/postgres/transaction.ts';
import {
  ServiceUnavailableError,
  SlotRejectedError,
  SlotTakenError,
  TransformationConflictError,
  VenueNotAuthorizedError,
} from '../errors.ts';
import {
  databaseWriteOutcome,
  fingerprint,
  type IdempotentWrite,
  type WriteOutcome,
} from '../idempotency.ts';

/** A hold, as the partner asked for it (the phone already in +91XXXXXXXXXX form). */
export interface HoldRequest {
  venue_id: string;
  resource_id: string;
  slot_start: Date;
  slot_duration_minutes: number;
  idempotency_key: string;
  customer_phone?: string | undefined;
}

/**
 * Places a hold for `partnerId`, or replays the hold placed with the same idempotency key: either
 * way the hold as it was placed.
 */
export async function createHold(
  deps: { db: Knex; boss: PgBoss },
  partnerId: string,
  input: HoldRequest,
): Promise<WriteOutcome<holds.HoldRow>> {
  const write: IdempotentWrite = {
    partnerId,
    key: input.idempotency_key,
    operation: 'hold',
    request: input,
    replayAnyRequest: true,
  };
  try {
    return await retryLostRaces(async () => {
      try {
        const outcome = await holds.place(deps.db, {
          partnerId,
          idempotencyKey: input.idempotency_key,
          fingerprint: fingerprint(input),
          venueId: input.venue_id,
          resourceId: resources.isUuid(input.resource_id) ? input.resource_id : null,
          slotStart: input.slot_start,
          durationMinutes: input.slot_duration_minutes,
          customerPhone: input.customer_phone ?? null,
        });
        return databaseWriteOutcome(outcome, write, holds.holdFromJson);
      } catch (err) {
        const refusal = refusalOf(err);
        if (refusal?.reason === 'overdue') {
          await expireOverdueHolds(deps, refusal.detail!.split(','));
          throw new RaceLost('an overdue hold was in the way', { cause: err });
        }
        if (refusal) throw holdRefused(refusal);
        // The overlap read runs after the window lock, so this takes a writer that skipped the
        // lock; a second look tells a live rival (409) from one already gone.
        if (!isPgError(err, EXCLUSION_VIOLATION, reservations.NO_OVERLAP_CONSTRAINT)) throw err;
        throw (await liveConflict(deps.db, input)) ?? new RaceLost('the overlap is gone', { cause: err });
      }
    });
  } catch (err) {
    // Still losing races after every retry: the window is contended, not taken. Ask for a retry.
    if (isPgError(err, EXCLUSION_VIOLATION) || refusalOf(err)?.reason === 'overdue') {
      throw new ServiceUnavailableError();
    }
    throw err;
  }
}

/** The API's error for a refusal of `place_hold()`. */
function holdRefused({ reason, detail }: Refusal): Error {
  switch (reason) {
    case 'venue_not_authorized':
      return new VenueNotAuthorizedError();
    case 'resource_not_in_venue':
      return new SlotRejectedError('resource_id is not a resource of this venue (copy it from discovery).');
    case 'venue_paused':
      return new SlotRejectedError('The venue is paused and takes no holds.');
    case 'duration_not_multiple':
      return new SlotRejectedError(
        `slot_duration_minutes must be a whole multiple of the resource's ${detail} minutes.`,
      );
    case 'not_on_grid':
      return new SlotRejectedError(
        'slot_start must be a slot start returned by availability, on an open day within the booking window, ' +
          "and the hold must end within that day's opening hours.",
      );
    case 'not_bookable':
      return new SlotRejectedError('The slot has started, is inside the venue lead time, or is blacked out.');
    case 'slot_taken':
      return new SlotTakenError();
    case 'transformation_conflict':
      return new TransformationConflictError();
    default:
      return new Error(`place_hold refused for an unknown reason: ${reason}`);
  }
}

/** Expires holds found past their expiry in a new hold's way, each as its job would. */
export async function expireOverdueHolds(deps: { db: Knex; boss: PgBoss }, holdIds: string[]): Promise<void> {
  for (const holdId of holdIds) {
    await transaction(deps.db, (trx) => expireOverdueHold(trx, deps.boss, holdId));
  }
}

/** 409: the same resource holds the window, or a resource sharing its units (whole or part) does. */
function conflictError(conflictingResources: string[], resourceId: string) {
  return conflictingResources.includes(resourceId) ? new SlotTakenError() : new TransformationConflictError();
}

/** After an exclusion violation: the 409 for the live reservation it hit, or undefined if none is left. */
async function liveConflict(db: Knex, input: HoldRequest) {
  const end = new Date(input.slot_start.getTime() + input.slot_duration_minutes * 60_000);
  const units = await resources.unitsOf(db, input.resource_id);
  const overlaps = await reservations.overlapping(db, units, input.slot_start, end);
  const live = overlaps.filter((o) => !o.overdue).map((o) => o.resource_id);
  return live.length ? conflictError(live, input.resource_id) : undefined;
}
