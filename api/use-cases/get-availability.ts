/** Availability: the grid of a venue (or one resource) on a venue-local date, in one statement. */
import type { Knex } from '../../db/postgres/knex.ts';
import { refusalOf } from '../../db/postgres/pg-errors.ts';
import * as slots from '../../db/queries/slots.ts';
import { InvalidFieldError, VenueNotAuthorizedError } from '../errors.ts';
import { presentGrid } from '../presenters/availability.ts';
import {
  dayOfResource,
  gridKey,
  keepGrid,
  keptCounts,
  keptGrid,
  keptVenueGrid,
  validUntil,
} from './kept-availability.ts';

/**
 * The grid's bytes up to its `changes_cursor` (`presentGrid`), and the change log's position they
 * are exact at: the grid this process kept when the database says it still stands, else the grid
 * read anew, then kept (api/use-cases/kept-availability.ts). 403 for a venue not granted (or
 * archived, or missing), then 400 for a resource that is not the venue's, on every request.
 */
export async function getAvailability(
  db: Knex,
  partnerId: string,
  query: { venue_id: string; date: string; resource_id?: string | undefined },
): Promise<{ grid: Buffer; changesPosition: bigint }> {
  const key = gridKey(query.venue_id, query.date, query.resource_id);
  const known = keptGrid(key);
  // A resource not kept yet may be answered from the whole venue's grid of that date, if kept.
  const venue =
    known === undefined && query.resource_id !== undefined
      ? keptVenueGrid(query.venue_id, query.date, query.resource_id)
      : undefined;
  let read: slots.AvailabilityRead;
  try {
    read = await slots.availableOnDate(
      db,
      partnerId,
      query.venue_id,
      query.date,
      query.resource_id,
      known ?? venue,
    );
  } catch (err) {
    switch (refusalOf(err)?.reason) {
      case 'venue_not_authorized':
        throw new VenueNotAuthorizedError();
      case 'resource_not_in_venue':
        throw new InvalidFieldError(
          'resource_id',
          'is not a resource of this venue (copy it from discovery)',
        );
      default:
        throw err;
    }
  }
  if (read.unchanged && venue !== undefined) {
    keptCounts.fromVenue++;
    const grid = presentGrid(query.venue_id, query.date, dayOfResource(venue.days, query.resource_id!));
    const { changesPosition, snapshot } = read;
    keepGrid(key, { bytes: grid, changesPosition, snapshot, validUntilMs: venue.validUntilMs }, known);
    return { grid, changesPosition };
  }
  if (read.unchanged) {
    keptCounts.sentAgain++;
    // Exact at the newer position now: the next request's question starts from there.
    keepGrid(key, { ...known!, changesPosition: read.changesPosition, snapshot: read.snapshot }, known);
    return { grid: known!.bytes, changesPosition: read.changesPosition };
  }
  keptCounts.readAnew++;
  const grid = presentGrid(query.venue_id, query.date, read.grid.days);
  const changesPosition = read.grid.changesPosition;
  keepGrid(
    key,
    {
      bytes: grid,
      changesPosition,
      snapshot: read.snapshot,
      validUntilMs: validUntil(read),
      ...(query.resource_id === undefined ? { days: read.grid.days } : {}),
    },
    known,
  );
  return { grid, changesPosition };
}
