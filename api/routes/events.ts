/** GET /events: the missed-event pull (CONTRACT.md, "Beyond the spec"). */
import { eventPayload } from '../../db/rules/event-payload.ts';
import { ValidationError } from '../errors.ts';
import { defineRoute } from '../route.ts';
import { pullEvents } from '../use-cases/pull-events.ts';
import { EventPullQuery, EventPullResponse } from '../schemas/events.ts';

export const eventRoutes = [
  defineRoute({
    method: 'GET',
    path: '/events',
    operationId: 'listEvents',
    summary: 'Events of your venues (missed-event pull)',
    description:
      'Every event, of every type, of the venues granted to you now, whether or not you subscribe to webhooks; ' +
      'oldest first, each exactly the body its webhook delivery carries, with `delivery_id` null. Page with ' +
      '`starting_after` (the last `event_id` of a page) while `has_more` is true; start at an instant with ' +
      '`since`. An event is listed once every transaction that began before it has ended (usually within ' +
      'milliseconds), so a page never skips one that commits later. Events are kept at least 30 days.',
    tag: 'Events',
    auth: true,
    query: EventPullQuery,
    responses: {
      200: {
        description: 'A page of events.',
        schema: EventPullResponse,
        example: {
          data: [
            {
              event_id: '1a2b3c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d',
              event_type: 'booking_created',
              timestamp: '2026-11-22T10:05:00.000Z',
              venue_id: '3f1c2a9e-8d7b-4c55-9a0e-2b6f4d8e1a73',
              slot_id: '5b1f3c7e-2d4a-5e8b-9c1d-7f2a4b6c8d0e',
              hold_id: '7c2e4a6b-8d0f-4e1a-b3c5-d7e9f1a3b5c7',
              booking_id: '2d4f6a8c-0e1b-4c3d-a5e7-f9b1d3c5e7a9',
              partner_id: '0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d',
              details: {
                resource_id: '9b2d7c1e-4f3a-4e8b-b1c6-5d0a7e9f2c48',
                slot_start: '2026-11-23T00:30:00.000Z',
                slot_end: '2026-11-23T01:30:00.000Z',
                price_rupees: 500,
              },
              delivery_id: null,
            },
          ],
          has_more: false,
        },
      },
    },
    errors: [ValidationError],
    async handler({ partnerId, query }, { db }) {
      const { rows, hasMore } = await pullEvents(db, partnerId, {
        startingAfter: query.starting_after,
        since: query.since,
        types: query.types,
        limit: query.limit,
      });
      return { status: 200, body: { data: rows.map((e) => eventPayload(e, null)), has_more: hasMore } };
    },
  }),
];
