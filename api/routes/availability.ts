/** GET /slots/availability: the slot grid of a venue on a date, with prices and availability hints. */
import { ValidationError, VenueNotAuthorizedError } from '../errors.ts';
import { presentAvailability } from '../presenters/availability.ts';
import { defineRoute } from '../route.ts';
import { getAvailability } from '../use-cases/get-availability.ts';
import { AvailabilityQuery, AvailabilityResponse } from '../schemas/availability.ts';

export const availabilityRoutes = [
  defineRoute({
    method: 'GET',
    path: '/slots/availability',
    operationId: 'getAvailability',
    summary: 'Slots of a venue on a date',
    description:
      'The grid of every resource (or one) on a venue-local date: each slot with its price for that date and ' +
      'whether it can be held now. `is_available` is a hint; the hold decides. Dates outside the booking ' +
      'window, and closed days, give an empty `slots` array.',
    tag: 'Availability',
    auth: true,
    query: AvailabilityQuery,
    responses: {
      200: {
        description: 'The slots, by start time.',
        schema: AvailabilityResponse,
        example: {
          venue_id: '3f1c2a9e-8d7b-4c55-9a0e-2b6f4d8e1a73',
          date: '2026-11-23',
          slots: [
            {
              slot_id: '5b1f3c7e-2d4a-5e8b-9c1d-7f2a4b6c8d0e',
              resource_id: '9b2d7c1e-4f3a-4e8b-b1c6-5d0a7e9f2c48',
              slot_start: '2026-11-23T00:30:00.000Z',
              slot_end: '2026-11-23T01:30:00.000Z',
              price_rupees: 500,
              is_available: true,
            },
          ],
          changes_cursor: '2n9c',
        },
      },
    },
    errors: [VenueNotAuthorizedError, ValidationError],
    async handler({ partnerId, query }, { db }) {
      const { grid, changesPosition } = await getAvailability(db, partnerId, query);
      return { status: 200, body: presentAvailability(grid, changesPosition) };
    },
  }),
];
