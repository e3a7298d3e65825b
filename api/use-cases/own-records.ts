/**
 * Loading a hold or booking for an operation on it, with the checks every such operation makes in
 * the spec's order: it exists (404), it is the caller's (403 UNAUTHORIZED), and its venue is still
 * granted to the caller and not archived (403 VENUE_NOT_AUTHORIZED). The row is locked.
 */
import type { Knex } from '../../db/knex.ts';
import * as bookings from '../../db/queries/bookings.ts';
import * as holds from '../../db/queries/holds.ts';
import * as venues from '../../db/queries/venues.ts';
import {
  BookingNotFoundError,
  HoldNotFoundError,
  NotOwnerError,
  VenueNotAuthorizedError,
} from '../errors.ts';

async function assertVenueAuthorized(trx: Knex, partnerId: string, venueId: string): Promise<void> {
  if (!(await venues.findVisible(trx, partnerId, venueId))) throw new VenueNotAuthorizedError();
}

/** The caller's hold, locked. */
export async function lockOwnHold(trx: Knex, partnerId: string, holdId: string): Promise<holds.HoldRow> {
  const hold = await holds.lockById(trx, holdId);
  if (!hold) throw new HoldNotFoundError();
  if (hold.partner_id !== partnerId) throw new NotOwnerError('hold');
  await assertVenueAuthorized(trx, partnerId, hold.venue_id);
  return hold;
}

/** The caller's booking, locked. */
export async function lockOwnBooking(
  trx: Knex,
  partnerId: string,
  bookingId: string,
): Promise<bookings.BookingRow> {
  const booking = await bookings.lockById(trx, bookingId);
  if (!booking) throw new BookingNotFoundError();
  if (booking.partner_id !== partnerId) throw new NotOwnerError('booking');
  await assertVenueAuthorized(trx, partnerId, booking.venue_id);
  return booking;
}
