/** Venue and resource rows as the API shows them. */
import type { ResourceRow } from '../../db/queries/resources.ts';
import type { VenueRow } from '../../db/queries/venues.ts';
import type { Resource, Venue } from '../schemas/venues.ts';

/** ISO weekday number (1 = Monday) to the English name the API uses. */
export const WEEKDAY_NAMES = ['Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday', 'Sunday'];

export function presentVenue(row: VenueRow): Venue {
  return {
    venue_id: row.id,
    name: row.name,
    address: row.address,
    city: row.city,
    status: row.status,
    timezone: row.timezone,
  };
}

export function presentResource(row: ResourceRow): Resource {
  const resource: Resource = {
    resource_id: row.id,
    venue_id: row.venue_id,
    resource_type: row.resource_type,
    sport_category: row.sport_category,
    duration_minutes: row.duration_minutes,
    price_rupees: row.price_rupees,
    operating_hours_start: row.opens_at.slice(0, 5),
    operating_hours_end: row.closes_at.slice(0, 5),
  };
  if (row.closed_on.length) {
    resource.closed_on = [...row.closed_on]
      .sort((a, b) => a - b)
      .map((day) => WEEKDAY_NAMES[day - 1])
      .join(',');
  }
  return resource;
}
