/**
 * POST /bookings/hold in one transaction: idempotency, venue grant, resource, grid alignment and
 * booking rules, price, then the reservation itself. The reservation is decided by locking the
 * units' rows in a fixed order and letting the exclusion constraint have the last word; the
 * checks before it only pick the right error. The hold_created event and the expiry job are
 * written in the same transaction. A free window is never refused: a transaction that loses only
 * to a transient conflict (a deadlock, or an exclusion violation whose rival is gone on a second
 * look) runs again; 409 is only ever the answer to a live overlapping reservation.
 */
import type { PgBoss } from 'pg-boss';
import { recordEvents, type EventLog } from '../../db/rules/events.ts';
import { expireHoldIfDue } from '../../db/rules/hold-expiry.ts';
import { enqueue } from '../../db/jobs/enqueue.ts';
import { HOLD_EXPIRE } from '../../db/jobs/kinds.ts';
import type { Knex } from '../../db/postgres/knex.ts';
import { EXCLUSION_VIOLATION, isPgError } from '../../db/postgres/pg-errors.ts';
import * as holdContext from '../../db/queries/hold-context.ts';
import * as holds from '../../db/queries/holds.ts';
import * as reservations from '../../db/queries/reservations.ts';
import * as resources from '../../db/queries/resources.ts';
import { RaceLost, retryLostRaces } from '../../db/postgres/transaction.ts';
import {
  ServiceUnavailableError,
  SlotRejectedError,
  SlotTakenError,
  TransformationConflictError,
  VenueNotAuthorizedError,
} from '../errors.ts';
import { withIdempotency } from '../idempotency.ts';

/** A hold, as the partner asked for it (the phone already in +91XXXXXXXXXX form). */
export interface HoldRequest {
  venue_id: string;
  resource_id: string;
  slot_start: Date;
  slot_duration_minutes: number;
  idempotency_key: string;
  customer_phone?: string | undefined;
  partner_id?: unknown;
}

/**
 * Places a hold for `partnerId`, or replays the hold placed with the same idempotency key: the
 * result as `present` made it the first time (idempotency.ts).
 */
export async function createHold<R>(
  deps: { db: Knex; boss: PgBoss },
  partnerId: string,
  input: HoldRequest,
  present: (hold: holds.HoldRow) => R,
): Promise<R> {
  const write = {
    partnerId,
    key: input.idempotency_key,
    operation: 'hold' as const,
    request: input,
    replayAnyRequest: true,
  };
  try {
    return await retryLostRaces(async () => {
      try {
        return await deps.db.transaction((trx) =>
          withIdempotency(trx, write, () =>
            recordEvents(trx, deps.boss, async (events) =>
              present(await placeHold(trx, deps.boss, events, partnerId, input)),
            ),
          ),
        );
      } catch (err) {
        // Under contention the overlap read can miss a reservation committed while this transaction
        // waited for the unit locks (reservations.lockUnitsAndFindOverlaps); the exclusion constraint
        // then refuses the insert. A second look tells a live rival (409) from one already gone.
        if (!isPgError(err, EXCLUSION_VIOLATION, reservations.NO_OVERLAP_CONSTRAINT)) throw err;
        throw (await liveConflict(deps.db, input)) ?? new RaceLost('the overlap is gone', { cause: err });
      }
    });
  } catch (err) {
    // Still losing races after every retry: the window is contended, not taken. Ask for a retry.
    if (isPgError(err, EXCLUSION_VIOLATION)) throw new ServiceUnavailableError();
    throw err;
  }
}

async function placeHold(
  trx: Knex.Transaction,
  boss: PgBoss,
  events: EventLog,
  partnerId: string,
  input: HoldRequest,
): Promise<holds.HoldRow> {
  const start = input.slot_start;
  const end = new Date(start.getTime() + input.slot_duration_minutes * 60_000);
  const context = await holdContext.load(trx, {
    partnerId,
    venueId: input.venue_id,
    resourceId: input.resource_id,
    start,
    end,
    customerPhone: input.customer_phone ?? null,
  });
  const { venue, resource } = context;
  if (!venue) throw new VenueNotAuthorizedError();
  if (!resource)
    throw new SlotRejectedError('resource_id is not a resource of this venue (copy it from discovery).');
  if (venue.status !== 'active') throw new SlotRejectedError('The venue is paused and takes no holds.');
  assertBookable(context.slots, resource.duration_minutes, start, input.slot_duration_minutes);
  const fullPrice = context.slots.reduce((sum, slot) => sum + slot.price_rupees, 0);
  const price = Math.round((fullPrice * (100 - context.discountPercent)) / 100);

  const overlaps = await reservations.lockUnitsAndFindOverlaps(trx, resource.units, start, end);
  // A hold past its expiry blocks nobody: expire it here, whether or not its job has run yet.
  for (const overdue of overlaps.filter((o) => o.overdue)) {
    await expireHoldIfDue(trx, boss, events, overdue.hold_id);
  }
  const conflicts = overlaps.filter((o) => !o.overdue).map((o) => o.resource_id);
  if (conflicts.length) throw conflictError(conflicts, resource.id);

  const hold = await holds.insertWithReservations(
    trx,
    events,
    {
      partnerId,
      venueId: venue.id,
      resourceId: resource.id,
      slotStart: start,
      slotEnd: end,
      holdSeconds: venue.hold_seconds,
      priceRupees: price,
      customerPhone: input.customer_phone ?? null,
      discountPercent: context.discountPercent,
    },
    resource.units,
  );
  await enqueue(boss, trx, HOLD_EXPIRE, { hold_id: hold.id }, { startAfter: hold.hold_expiry_at });
  return hold;
}

/** Throws SlotRejectedError, saying which rule, unless the covered grid slots can be held. */
function assertBookable(
  covered: holdContext.HoldContext['slots'],
  slotMinutes: number,
  start: Date,
  durationMinutes: number,
): void {
  if (durationMinutes % slotMinutes !== 0) {
    throw new SlotRejectedError(
      `slot_duration_minutes must be a whole multiple of the resource's ${slotMinutes} minutes.`,
    );
  }
  if (
    covered[0]?.slot_start.getTime() !== start.getTime() ||
    covered.length * slotMinutes !== durationMinutes
  ) {
    throw new SlotRejectedError(
      'slot_start must be a slot start returned by availability, on an open day within the booking window, ' +
        "and the hold must end within that day's opening hours.",
    );
  }
  if (covered.some((slot) => !slot.bookable)) {
    throw new SlotRejectedError('The slot has started, is inside the venue lead time, or is blacked out.');
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
