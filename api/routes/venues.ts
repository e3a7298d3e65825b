/** Discovery routes: the venues and resources a partner is granted. */
import { VenueNotFoundError } from '../errors.ts';
import { presentResource, presentVenue } from '../presenters/venue.ts';
import { defineRoute } from '../route.ts';
import { getVenue, listVenueResources, listVenues } from '../use-cases/discover-venues.ts';
import { ResourceListResponse, VenueListResponse, VenueParams, VenueResponse } from '../schemas/venues.ts';

const tag = 'Discovery';
const venueExample = {
  venue_id: '3f1c2a9e-8d7b-4c55-9a0e-2b6f4d8e1a73',
  name: 'Riverside Sports Arena',
  address: '12 MG Road',
  city: 'Pune',
  status: 'active',
  timezone: 'Asia/Kolkata',
};
const resourceExample = {
  resource_id: '9b2d7c1e-4f3a-4e8b-b1c6-5d0a7e9f2c48',
  venue_id: venueExample.venue_id,
  resource_type: 'court',
  sport_category: 'badminton',
  duration_minutes: 60,
  price_rupees: 500,
  operating_hours_start: '06:00',
  operating_hours_end: '22:00',
  closed_on: 'Monday',
};

export const venueRoutes = [
  defineRoute({
    method: 'GET',
    path: '/partner/venues',
    operationId: 'listVenues',
    summary: 'List the venues granted to you',
    description: 'Archived venues are not listed. An empty `data` array means no grants yet.',
    tag,
    auth: true,
    responses: {
      200: { description: 'Granted venues.', schema: VenueListResponse, example: { data: [venueExample] } },
    },
    async handler({ partnerId }, { db }) {
      const rows = await listVenues(db, partnerId);
      return { status: 200, body: { data: rows.map(presentVenue) } };
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/partner/venues/{venueId}',
    operationId: 'getVenue',
    summary: 'Get one granted venue',
    description:
      'A venue that is not granted to you, archived or missing is 404 VENUE_NOT_FOUND, indistinguishably.',
    tag,
    auth: true,
    params: VenueParams,
    responses: { 200: { description: 'The venue.', schema: VenueResponse, example: { data: venueExample } } },
    errors: [VenueNotFoundError],
    async handler({ partnerId, params }, { db }) {
      const venue = await getVenue(db, partnerId, params.venueId);
      return { status: 200, body: { data: presentVenue(venue) } };
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/partner/venues/{venueId}/resources',
    operationId: 'listVenueResources',
    summary: "List a granted venue's bookable resources",
    description:
      'Copy `resource_id` from here; never construct it. `price_rupees` is the base price: availability has the ' +
      'price of a date. `closed_on` is absent when the resource is open every day.',
    tag,
    auth: true,
    params: VenueParams,
    responses: {
      200: {
        description: 'The resources.',
        schema: ResourceListResponse,
        example: { success: true, count: 1, data: [resourceExample] },
      },
    },
    errors: [VenueNotFoundError],
    async handler({ partnerId, params }, { db }) {
      const rows = await listVenueResources(db, partnerId, params.venueId);
      return { status: 200, body: { success: true, count: rows.length, data: rows.map(presentResource) } };
    },
  }),
];
