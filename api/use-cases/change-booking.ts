/**
 * Cancel and refund, each one transaction. Cancel: BOOKED → CANCELLED, freeing the slot. Refund:
 * BOOKED → REFUNDED (freeing the slot) or CANCELLED → REFUNDED. Keys are per operation: a key used
 * to cancel and sent to refund is 409 IDEMPOTENCY_KEY_MISMATCH. Leaving BOOKED also gives back the
 * package credit that paid for the booking, while its purchase has not expired (so a cancel then a
 * refund gives it back once).
 */
import type { PgBoss } from 'pg-boss';
import { recordBookingEvent } from '../../db/rules/events.ts';
import { freeWindow } from '../../db/rules/free-window.ts';
import type { Knex } from '../../db/postgres/knex.ts';
import { transaction } from '../../db/postgres/transaction.ts';
import * as bookings from '../../db/queries/bookings.ts';
import * as purchases from '../../db/queries/package-purchases.ts';
import { InvalidHoldStateError } from '../errors.ts';
import { withIdempotency, type WriteOutcome } from '../idempotency.ts';
import { lockOwnBooking } from './own-records.ts';

type Deps = { db: Knex; boss: PgBoss };

/** A keyed change (cancel, refund, release) as the partner asked for it. */
export interface ChangeRequest {
  idempotency_key: string;
  reason?: string | undefined;
}

/**
 * Cancels the caller's booking, or replays the cancel made with the same key: the cancelled booking
 * as it was then (idempotency.ts).
 */
export function cancelBooking(
  deps: Deps,
  partnerId: string,
  bookingId: string,
  input: ChangeRequest,
): Promise<WriteOutcome<bookings.BookingRow>> {
  return changeOwnBooking(deps, partnerId, bookingId, input, 'booking_cancel', async (trx, booking) => {
    const cancelled = await bookings.cancel(trx, booking.id, input.reason ?? null);
    if (!cancelled) {
      throw new InvalidHoldStateError(
        `The booking is ${booking.status}; only a BOOKED booking can be cancelled.`,
      );
    }
    await releaseBooked(
      trx,
      deps.boss,
      booking,
      await recordBookingEvent(trx, 'booking_cancelled', cancelled.id),
    );
    return cancelled;
  });
}

/** Marks the caller's booking refunded, or replays the refund made with the same key (as cancel). */
export function refundBooking(
  deps: Deps,
  partnerId: string,
  bookingId: string,
  input: ChangeRequest,
): Promise<WriteOutcome<bookings.BookingRow>> {
  return changeOwnBooking(deps, partnerId, bookingId, input, 'booking_refund', async (trx, booking) => {
    const refunded = await bookings.refund(trx, booking.id, input.reason ?? null);
    if (!refunded) throw new InvalidHoldStateError('The booking is already REFUNDED.');
    const eventId = await recordBookingEvent(trx, 'booking_refunded', refunded.id);
    if (booking.status === 'BOOKED') await releaseBooked(trx, deps.boss, booking, eventId);
    return refunded;
  });
}

/** What leaving BOOKED undoes: the window is freed and a package credit that paid is given back. */
async function releaseBooked(
  trx: Knex.Transaction,
  boss: PgBoss,
  booking: bookings.BookingRow,
  eventId: string,
): Promise<void> {
  await freeWindow(trx, boss, booking.hold_id, eventId);
  if (booking.package_purchase_id) await purchases.returnCredit(trx, booking.package_purchase_id);
}

/** One keyed change of the caller's booking: idempotency, then the booking locked and checked. */
function changeOwnBooking(
  { db }: Deps,
  partnerId: string,
  bookingId: string,
  input: ChangeRequest,
  operation: 'booking_cancel' | 'booking_refund',
  change: (trx: Knex.Transaction, booking: bookings.BookingRow) => Promise<bookings.BookingRow>,
): Promise<WriteOutcome<bookings.BookingRow>> {
  const write = { partnerId, key: input.idempotency_key, operation, request: { bookingId } };
  return transaction(db, (trx) =>
    withIdempotency(
      trx,
      write,
      async () => change(trx, await lockOwnBooking(trx, partnerId, bookingId)),
      bookings.bookingFromJson,
    ),
  );
}
