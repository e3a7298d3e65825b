/** Reads of one's own bookings; allowed after a grant is withdrawn (CONTRACT.md). */
import type { Knex } from '../../db/postgres/knex.ts';
import * as bookings from '../../db/queries/bookings.ts';
import { pageOf } from './page.ts';
import { BookingNotFoundError, InvalidFieldError, NotOwnerError } from '../errors.ts';

/**
 * A page of the caller's bookings, newest booked_at first, and whether more match after its last
 * one. `startingAfter` must be one of the caller's bookings (the last of an earlier page).
 */
export async function listBookings(
  db: Knex,
  partnerId: string,
  filters: bookings.BookingFilters,
): Promise<{ rows: bookings.BookingRow[]; hasMore: boolean }> {
  if (filters.startingAfter) {
    const cursor = await bookings.findById(db, filters.startingAfter);
    if (cursor?.partner_id !== partnerId) {
      throw new InvalidFieldError('starting_after', 'is not one of your bookings');
    }
  }
  return pageOf(
    await bookings.listForPartner(db, partnerId, { ...filters, limit: filters.limit + 1 }),
    filters.limit,
  );
}

/** One of the caller's bookings: 404 when missing, 403 when another partner's. */
export async function getBooking(
  db: Knex,
  partnerId: string,
  bookingId: string,
): Promise<bookings.BookingRow> {
  const booking = await bookings.findById(db, bookingId);
  if (!booking) throw new BookingNotFoundError();
  if (booking.partner_id !== partnerId) throw new NotOwnerError('booking');
  return booking;
}
