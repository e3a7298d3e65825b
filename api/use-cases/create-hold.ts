/**
 * POST /bookings/hold in one transaction: idempotency, venue grant, resource, grid alignment and
 * booking rules, price, then the reservation itself. The reservation is decided by locking the
 * units' rows in a fixed order and letting the exclusion constraint have the last word; the
 * checks before it only pick the right error. The expiry job and the hold_created event are
 * written in the same transaction.
 */
import type { PgBoss } from 'pg-boss';
import { recordHoldEvent } from '../../db/events.ts';
import { expireHoldIfDue } from '../../db/hold-expiry.ts';
import { enqueue, JOBS } from '../../db/jobs.ts';
import type { Knex } from '../../db/knex.ts';
import { DEADLOCK_DETECTED, EXCLUSION_VIOLATION, isPgError } from '../../db/pg-errors.ts';
import { membershipDiscount } from '../../db/queries/booking-rules.ts';
import * as holds from '../../db/queries/holds.ts';
import * as reservations from '../../db/queries/reservations.ts';
import * as resources from '../../db/queries/resources.ts';
import * as slots from '../../db/queries/slots.ts';
import * as venues from '../../db/queries/venues.ts';
import { slotId } from '../../db/slot-id.ts';
import {
  SlotRejectedError,
  SlotTakenError,
  TransformationConflictError,
  VenueNotAuthorizedError,
} from '../errors.ts';
import { withIdempotency } from '../idempotency.ts';
import { presentHold } from '../presenters/booking.ts';
import type { RouteResult } from '../route.ts';
import type { CreateHoldBody } from '../routes/holds.schemas.ts';

/** Places a hold for `partnerId`, or replays the hold placed with the same idempotency key. */
export async function createHold(
  deps: { db: Knex; boss: PgBoss },
  partnerId: string,
  input: CreateHoldBody,
): Promise<RouteResult> {
  const target = { resourceId: '', units: [] as string[] };
  try {
    return await deps.db.transaction((trx) =>
      withIdempotency(
        trx,
        { partnerId, key: input.idempotency_key, operation: 'hold', request: input, replayAnyRequest: true },
        () => placeHold(trx, deps.boss, partnerId, input, target),
      ),
    );
  } catch (err) {
    // The unit locks make these unreachable in practice; if the constraint fires anyway, answer
    // with the conflict it found rather than a 500.
    if (isPgError(err, EXCLUSION_VIOLATION) || isPgError(err, DEADLOCK_DETECTED)) {
      throw await conflictError(deps.db, target.resourceId, target.units, input);
    }
    throw err;
  }
}

async function placeHold(
  trx: Knex.Transaction,
  boss: PgBoss,
  partnerId: string,
  input: CreateHoldBody,
  target: { resourceId: string; units: string[] },
): Promise<RouteResult> {
  const venue = await venues.findVisible(trx, partnerId, input.venue_id);
  if (!venue) throw new VenueNotAuthorizedError();
  const resource = await resources.findOfVenue(trx, venue.id, input.resource_id);
  if (!resource)
    throw new SlotRejectedError('resource_id is not a resource of this venue (copy it from discovery).');
  if (venue.status !== 'active') throw new SlotRejectedError('The venue is paused and takes no holds.');

  const start = input.slot_start;
  const end = new Date(start.getTime() + input.slot_duration_minutes * 60_000);
  const covered = await coveredSlots(trx, venue.id, resource, start, end, input.slot_duration_minutes);
  let price = covered.reduce((sum, slot) => sum + slot.price_rupees, 0);
  if (input.customer_phone) {
    const discount = await membershipDiscount(trx, venue.id, input.customer_phone);
    price = Math.round((price * (100 - discount)) / 100);
  }

  const units = await resources.unitsOf(trx, resource.id);
  Object.assign(target, { resourceId: resource.id, units });
  await reservations.lockUnits(trx, units);
  for (const staleId of await reservations.staleHoldIds(trx, units, start, end))
    await expireHoldIfDue(trx, staleId);
  const conflicts = await reservations.conflictingResourceIds(trx, units, start, end);
  if (conflicts.length)
    throw conflicts.includes(resource.id) ? new SlotTakenError() : new TransformationConflictError();

  const hold = await holds.insert(trx, {
    partnerId,
    venueId: venue.id,
    resourceId: resource.id,
    slotId: slotId(resource.id, start),
    slotStart: start,
    slotEnd: end,
    holdSeconds: venue.hold_seconds,
    priceRupees: price,
    customerPhone: input.customer_phone ?? null,
  });
  await reservations.insertForHold(trx, hold, units);
  await enqueue(boss, trx, JOBS.holdExpire, { hold_id: hold.id }, { startAfter: hold.hold_expiry_at });
  await recordHoldEvent(trx, 'hold_created', hold);
  return { status: 201, body: presentHold(hold) };
}

/** The grid slots the hold covers, or SlotRejectedError saying which rule it breaks. */
async function coveredSlots(
  trx: Knex,
  venueId: string,
  resource: resources.ResourceRow,
  start: Date,
  end: Date,
  durationMinutes: number,
): Promise<slots.SlotRow[]> {
  if (durationMinutes % resource.duration_minutes !== 0) {
    throw new SlotRejectedError(
      `slot_duration_minutes must be a whole multiple of the resource's ${resource.duration_minutes} minutes.`,
    );
  }
  const covered = await slots.covering(trx, venueId, resource.id, start, end);
  if (
    covered[0]?.slot_start.getTime() !== start.getTime() ||
    covered.length * resource.duration_minutes !== durationMinutes
  ) {
    throw new SlotRejectedError(
      'slot_start must be a slot start returned by availability, on an open day within the booking window, ' +
        "and the hold must end within that day's opening hours.",
    );
  }
  if (covered.some((slot) => !slot.bookable)) {
    throw new SlotRejectedError('The slot has started, is inside the venue lead time, or is blacked out.');
  }
  return covered;
}

async function conflictError(db: Knex, resourceId: string, units: string[], input: CreateHoldBody) {
  const end = new Date(input.slot_start.getTime() + input.slot_duration_minutes * 60_000);
  const conflicts = units.length
    ? await reservations.conflictingResourceIds(db, units, input.slot_start, end)
    : [];
  return conflicts.length && !conflicts.includes(resourceId)
    ? new TransformationConflictError()
    : new SlotTakenError();
}
