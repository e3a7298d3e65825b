/**
 * Loading a hold, hold group, series or booking for an operation on it, with the checks every such operation makes in
 * the spec's order: it exists (404), it is the caller's (403 UNAUTHORIZED), and its venue is still
 * granted to the caller and not archived (403 VENUE_NOT_AUTHORIZED). The row is locked, and read
 * with what those checks need in the same round trip.
 */
import type { Knex } from '../../db/postgres/knex.ts';
import * as bookings from '../../db/queries/bookings.ts';
import * as holdGroups from '../../db/queries/hold-groups.ts';
import * as series from '../../db/queries/series.ts';
import * as holds from '../../db/queries/holds.ts';
import {
  BookingNotFoundError,
  HoldGroupNotFoundError,
  HoldNotFoundError,
  NotOwnerError,
  SeriesNotFoundError,
  VenueNotAuthorizedError,
} from '../errors.ts';

/** The caller's hold, locked. */
export async function lockOwnHold(
  trx: Knex,
  partnerId: string,
  holdId: string,
): Promise<holds.HoldForChange> {
  const hold = await holds.lockForChange(trx, holdId, partnerId);
  if (!hold) throw new HoldNotFoundError();
  if (hold.partner_id !== partnerId) throw new NotOwnerError('hold');
  if (!hold.venue_authorized) throw new VenueNotAuthorizedError();
  return hold;
}

/** The caller's booking, locked. */
export async function lockOwnBooking(
  trx: Knex,
  partnerId: string,
  bookingId: string,
): Promise<bookings.BookingRow> {
  const booking = await bookings.lockForChange(trx, bookingId, partnerId);
  if (!booking) throw new BookingNotFoundError();
  if (booking.partner_id !== partnerId) throw new NotOwnerError('booking');
  if (!booking.venue_authorized) throw new VenueNotAuthorizedError();
  return booking;
}

/** The caller's hold group, locked. */
export async function lockOwnHoldGroup(
  trx: Knex,
  partnerId: string,
  holdGroupId: string,
): Promise<holdGroups.HoldGroupForChange> {
  const group = await holdGroups.lockForChange(trx, holdGroupId, partnerId);
  if (!group) throw new HoldGroupNotFoundError();
  if (group.partner_id !== partnerId) throw new NotOwnerError('hold group');
  if (!group.venue_authorized) throw new VenueNotAuthorizedError();
  return group;
}

/** The caller's series, locked. */
export async function lockOwnSeries(
  trx: Knex,
  partnerId: string,
  seriesId: string,
): Promise<series.SeriesForChange> {
  const found = await series.lockForChange(trx, seriesId, partnerId);
  if (!found) throw new SeriesNotFoundError();
  if (found.partner_id !== partnerId) throw new NotOwnerError('series');
  if (!found.venue_authorized) throw new VenueNotAuthorizedError();
  return found;
}
