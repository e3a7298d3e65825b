/** Availability: the grid of a venue (or one resource) on a venue-local date, from one query. */
import type { Knex } from '../../db/postgres/knex.ts';
import * as resources from '../../db/queries/resources.ts';
import * as slots from '../../db/queries/slots.ts';
import * as venues from '../../db/queries/venues.ts';
import { InvalidFieldError, VenueNotAuthorizedError } from '../errors.ts';

/** The slots, or 403 for a venue not granted (or archived, or missing). */
export async function getAvailability(
  db: Knex,
  partnerId: string,
  query: { venue_id: string; date: string; resource_id?: string | undefined },
): Promise<slots.SlotRow[]> {
  if (!(await venues.findVisible(db, partnerId, query.venue_id))) throw new VenueNotAuthorizedError();
  if (query.resource_id && !(await resources.findOfVenue(db, query.venue_id, query.resource_id))) {
    throw new InvalidFieldError('resource_id', 'is not a resource of this venue (copy it from discovery)');
  }
  return slots.forDate(db, query.venue_id, query.date, query.resource_id);
}
