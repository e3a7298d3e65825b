/** Availability: the grid of a venue (or one resource) on a venue-local date, in one statement. */
import type { Knex } from '../../db/postgres/knex.ts';
import { refusalOf } from '../../db/postgres/pg-errors.ts';
import * as slots from '../../db/queries/slots.ts';
import { InvalidFieldError, VenueNotAuthorizedError } from '../errors.ts';

/**
 * The slots, and the change log's position they were read at; 403 for a venue not granted (or
 * archived, or missing), then 400 for a resource that is not the venue's.
 */
export async function getAvailability(
  db: Knex,
  partnerId: string,
  query: { venue_id: string; date: string; resource_id?: string | undefined },
): Promise<slots.AvailabilitySnapshot> {
  try {
    return await slots.availableOnDate(db, partnerId, query.venue_id, query.date, query.resource_id);
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
}
