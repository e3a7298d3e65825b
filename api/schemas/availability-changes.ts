import { z } from 'zod';
import { ChangesCursor } from './availability.ts';
import { DateTime, opaqueText, queryInteger, Uuid } from './shared.ts';

/** What a cursor may be sent as; whether this service wrote it is the use case's to judge. */
const CursorText = z
  .string()
  .regex(/^[A-Za-z0-9._:-]{1,64}$/, 'must be a cursor of this feed: 1 to 64 of A-Za-z0-9._:-');

export const ChangesQuery = z.object({
  venue_id: Uuid,
  after: CursorText.meta({
    description: "A snapshot's `changes_cursor`, an earlier `next_after`, or any event's `cursor`.",
  }),
  resource_id: opaqueText({ min: 1, max: 100 })
    .optional()
    .meta({ description: 'Only the events of this resource, and the venue-wide ones.' }),
  limit: queryInteger(1, 500).default(100),
});
export type ChangesQuery = z.infer<typeof ChangesQuery>;

export const StreamQuery = z.object({
  venue_id: Uuid,
  resource_id: opaqueText({ min: 1, max: 100 })
    .optional()
    .meta({ description: 'Only the events of this resource, and the venue-wide ones.' }),
  // Checked by the use case, and only when there is no Last-Event-ID header: the header's presence
  // makes this value ignored, whatever it is (CONTRACT.md), so its shape is documented, not checked here.
  last_event_id: z
    .unknown()
    .optional()
    .meta({
      type: 'string',
      maxLength: 64,
      description:
        'Where to resume, for a client that cannot set headers on its first request: any cursor `after` takes. ' +
        'The Last-Event-ID header wins when both are sent, and this value is then ignored.',
    }),
});
export type StreamQuery = z.infer<typeof StreamQuery>;

export const SlotEvent = z
  .object({
    type: z.literal('slot'),
    cursor: ChangesCursor,
    venue_id: Uuid,
    slot_id: Uuid,
    resource_id: z.string(),
    slot_start: DateTime,
    slot_end: DateTime,
    price_rupees: z.number().int(),
    is_available: z.boolean(),
    held_until: DateTime.nullable().meta({
      description:
        'When the slot is unavailable only because of holds: the latest of their hold_expiry_at (it is free from ' +
        'then on, whether or not an event says so). Null otherwise.',
    }),
  })
  .meta({
    id: 'AvailabilitySlotEvent',
    description:
      'A slot a change affected, as GET /slots/availability would show it when the event was sent.',
  });

export const RangeEvent = z
  .object({
    type: z.literal('range'),
    cursor: ChangesCursor,
    venue_id: Uuid,
    resource_id: z.string().nullable().meta({ description: 'Null: every resource of the venue.' }),
    from: z.iso.date().meta({ description: 'Venue-local date, inclusive.' }),
    to: z.iso.date().meta({ description: 'Venue-local date, inclusive.' }),
    reason: z.enum(['blackout', 'price_rule', 'venue_status', 'resource']),
  })
  .meta({
    id: 'AvailabilityRangeEvent',
    description: "An operator's change: fetch availability again for every date from `from` to `to`.",
  });

export const ChangeEvent = z.union([SlotEvent, RangeEvent]).meta({ id: 'AvailabilityChangeEvent' });

export const ChangesResponse = z
  .object({
    data: z.array(ChangeEvent).meta({ description: 'Oldest first.' }),
    next_after: ChangesCursor.meta({
      description:
        'Where to poll from next: the last event’s cursor when has_more, else the feed’s current position.',
    }),
    has_more: z
      .boolean()
      .meta({ description: 'Whether at least one more event follows the last of this page.' }),
  })
  .meta({ id: 'AvailabilityChanges' });
export type ChangesResponse = z.infer<typeof ChangesResponse>;
