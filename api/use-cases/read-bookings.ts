/** Reads of one's own bookings; allowed after a grant is withdrawn (CONTRACT.md). */
import type { Knex } from '../../db/postgres/knex.ts';
import * as bookings from '../../db/queries/bookings.ts';
import { BookingNotFoundError, NotOwnerError } from '../errors.ts';

/** The caller's bookings, newest booked_at first. */
export function listBookings(
  db: Knex,
  partnerId: string,
  filters: bookings.BookingFilters,
): Promise<bookings.BookingRow[]> {
  return bookings.listForPartner(db, partnerId, filters);
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
