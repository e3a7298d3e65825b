/**
 * Loading a hold, hold group, series or booking for an operation on it, with the checks every such
 * operation makes in the spec's order: it exists (404), it is the caller's (403 UNAUTHORIZED), and
 * its venue is still granted to the caller and not archived (403 VENUE_NOT_AUTHORIZED). The caller's
 * row is locked, and read with what those checks need in the same round trip; a row that is not
 * the caller's is never locked (db/queries/owned-records.ts), and costs a second read to tell 403
 * from 404.
 */
import type { Knex } from '../../db/postgres/knex.ts';
import * as bookings from '../../db/queries/bookings.ts';
import * as holdGroups from '../../db/queries/hold-groups.ts';
import * as series from '../../db/queries/series.ts';
import * as holds from '../../db/queries/holds.ts';
import { exists, type OwnedTable } from '../../db/queries/owned-records.ts';
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
  if (!hold) throw await notOwnOrNone(trx, 'holds', holdId, 'hold', HoldNotFoundError);
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
  if (!booking) throw await notOwnOrNone(trx, 'bookings', bookingId, 'booking', BookingNotFoundError);
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
  if (!group) throw await notOwnOrNone(trx, 'hold_groups', holdGroupId, 'hold group', HoldGroupNotFoundError);
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
  if (!found) throw await notOwnOrNone(trx, 'series', seriesId, 'series', SeriesNotFoundError);
  if (!found.venue_authorized) throw new VenueNotAuthorizedError();
  return found;
}

/** Why a row was not locked as the caller's: another partner's (403) or none (404). */
async function notOwnOrNone(
  trx: Knex,
  table: OwnedTable,
  id: string,
  what: string,
  NotFound: new () => Error,
): Promise<Error> {
  return (await exists(trx, table, id)) ? new NotOwnerError(what) : new NotFound();
}
