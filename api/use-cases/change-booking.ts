/**
 * Cancel and refund, each one transaction. Cancel: BOOKED → CANCELLED, freeing the slot. Refund:
 * BOOKED → REFUNDED (freeing the slot) or CANCELLED → REFUNDED. Keys are per operation: a key used
 * to cancel and sent to refund is 409 IDEMPOTENCY_KEY_MISMATCH.
 */
import type { PgBoss } from 'pg-boss';
import { recordBookingEvent } from '../../db/events.ts';
import type { Knex } from '../../db/knex.ts';
import * as bookings from '../../db/queries/bookings.ts';
import * as reservations from '../../db/queries/reservations.ts';
import { InvalidHoldStateError } from '../errors.ts';
import { withIdempotency } from '../idempotency.ts';
import type { RouteResult } from '../route.ts';
import type { ReasonBody } from '../routes/shared.schemas.ts';
import { lockOwnBooking } from './own-records.ts';

type Deps = { db: Knex; boss: PgBoss };

/** Cancels the caller's booking, or replays the cancel made with the same key. */
export function cancelBooking(
  deps: Deps,
  partnerId: string,
  bookingId: string,
  input: ReasonBody,
): Promise<RouteResult> {
  return changeOwnBooking(deps, partnerId, bookingId, input, 'booking_cancel', async (trx, booking) => {
    const cancelled = await bookings.cancel(trx, booking.id, input.reason ?? null);
    if (!cancelled) {
      throw new InvalidHoldStateError(
        `The booking is ${booking.status}; only a BOOKED booking can be cancelled.`,
      );
    }
    await reservations.release(trx, booking.hold_id);
    await recordBookingEvent(trx, deps.boss, 'booking_cancelled', cancelled.id);
    return {
      status: 200,
      body: { message: 'Booking cancelled.', booking_id: booking.id, status: 'CANCELLED' },
    };
  });
}

/** Marks the caller's booking refunded, or replays the refund made with the same key. */
export function refundBooking(
  deps: Deps,
  partnerId: string,
  bookingId: string,
  input: ReasonBody,
): Promise<RouteResult> {
  return changeOwnBooking(deps, partnerId, bookingId, input, 'booking_refund', async (trx, booking) => {
    const refunded = await bookings.refund(trx, booking.id, input.reason ?? null);
    if (!refunded) throw new InvalidHoldStateError('The booking is already REFUNDED.');
    if (booking.status === 'BOOKED') await reservations.release(trx, booking.hold_id);
    await recordBookingEvent(trx, deps.boss, 'booking_refunded', refunded.id);
    return {
      status: 200,
      body: { message: 'Booking refunded.', booking_id: booking.id, status: 'REFUNDED' },
    };
  });
}

/** One keyed change of the caller's booking: idempotency, then the booking locked and checked. */
function changeOwnBooking(
  { db }: Deps,
  partnerId: string,
  bookingId: string,
  input: ReasonBody,
  operation: 'booking_cancel' | 'booking_refund',
  change: (trx: Knex.Transaction, booking: bookings.BookingRow) => Promise<RouteResult>,
): Promise<RouteResult> {
  const write = { partnerId, key: input.idempotency_key, operation, request: { bookingId } };
  return db.transaction((trx) =>
    withIdempotency(trx, write, async () => change(trx, await lockOwnBooking(trx, partnerId, bookingId))),
  );
}
