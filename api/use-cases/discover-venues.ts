/** Discovery: what a partner may see. Archived and ungranted venues are invisible (404). */
import type { Knex } from '../../db/postgres/knex.ts';
import * as resources from '../../db/queries/resources.ts';
import * as venues from '../../db/queries/venues.ts';
import { VenueNotFoundError } from '../errors.ts';

/** The partner's visible venues. */
export function listVenues(db: Knex, partnerId: string): Promise<venues.VenueRow[]> {
  return venues.listVisible(db, partnerId);
}

/** One visible venue, or VenueNotFoundError. */
export async function getVenue(db: Knex, partnerId: string, venueId: string): Promise<venues.VenueRow> {
  const venue = await venues.findVisible(db, partnerId, venueId);
  if (!venue) throw new VenueNotFoundError();
  return venue;
}

/** The resources of one visible venue, or VenueNotFoundError. */
export async function listVenueResources(
  db: Knex,
  partnerId: string,
  venueId: string,
): Promise<resources.ResourceRow[]> {
  await getVenue(db, partnerId, venueId);
  return resources.listByVenue(db, venueId);
}
