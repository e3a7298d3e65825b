/**
 * Cancel and refund, each one transaction. Cancel: BOOKED → CANCELLED, freeing the slot. Refund:
 * BOOKED → REFUNDED (freeing the slot) or CANCELLED → REFUNDED. Keys are per operation: a key used
 * to cancel and sent to refund is 409 IDEMPOTENCY_KEY_MISMATCH.
 */
import { recordBookingEvent } from '../../db/events.ts';
import type { PgBoss } from 'pg-boss';
import type { Knex } from '../../db/knex.ts';
import * as bookings from '../../db/queries/bookings.ts';
import * as reservations from '../../db/queries/reservations.ts';
import { InvalidHoldStateError } from '../errors.ts';
import { withIdempotency } from '../idempotency.ts';
import type { RouteResult } from '../route.ts';
import type { ReasonBody } from '../routes/shared.schemas.ts';
import { lockOwnBooking } from './own-records.ts';

/** Cancels the caller's booking, or replays the cancel made with the same key. */
export function cancelBooking(
  { db, boss }: { db: Knex; boss: PgBoss },
  partnerId: string,
  bookingId: string,
  input: ReasonBody,
): Promise<RouteResult> {
  const write = {
    partnerId,
    key: input.idempotency_key,
    operation: 'booking_cancel' as const,
    request: { bookingId },
  };
  return db.transaction((trx) =>
    withIdempotency(trx, write, async () => {
      const booking = await lockOwnBooking(trx, partnerId, bookingId);
      const cancelled = await bookings.cancel(trx, booking.id, input.reason ?? null);
      if (!cancelled) {
        throw new InvalidHoldStateError(
          `The booking is ${booking.status}; only a BOOKED booking can be cancelled.`,
        );
      }
      await reservations.release(trx, booking.hold_id);
      await recordBookingEvent(trx, boss, 'booking_cancelled', cancelled.id);
      return {
        status: 200,
        body: { message: 'Booking cancelled.', booking_id: booking.id, status: 'CANCELLED' },
      };
    }),
  );
}

/** Marks the caller's booking refunded, or replays the refund made with the same key. */
export function refundBooking(
  { db, boss }: { db: Knex; boss: PgBoss },
  partnerId: string,
  bookingId: string,
  input: ReasonBody,
): Promise<RouteResult> {
  const write = {
    partnerId,
    key: input.idempotency_key,
    operation: 'booking_refund' as const,
    request: { bookingId },
  };
  return db.transaction((trx) =>
    withIdempotency(trx, write, async () => {
      const booking = await lockOwnBooking(trx, partnerId, bookingId);
      const refunded = await bookings.refund(trx, booking.id, input.reason ?? null);
      if (!refunded) throw new InvalidHoldStateError('The booking is already REFUNDED.');
      if (booking.status === 'BOOKED') await reservations.release(trx, booking.hold_id);
      await recordBookingEvent(trx, boss, 'booking_refunded', refunded.id);
      return {
        status: 200,
        body: { message: 'Booking refunded.', booking_id: booking.id, status: 'REFUNDED' },
      };
    }),
  );
}
