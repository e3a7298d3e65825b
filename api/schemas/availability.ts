import { z } from 'zod';
import { DateOnly, DateTime, opaqueText, Uuid } from './shared.ts';

export const AvailabilityQuery = z.object({
  venue_id: Uuid,
  date: DateOnly.meta({ description: 'Venue-local date.' }),
  resource_id: opaqueText({ min: 1, max: 100 }).optional().meta({ description: 'Only this resource.' }),
});
export type AvailabilityQuery = z.infer<typeof AvailabilityQuery>;

export const AvailabilitySlot = z
  .object({
    slot_id: Uuid,
    resource_id: z.string(),
    slot_start: DateTime,
    slot_end: DateTime,
    price_rupees: z.number().int(),
    is_available: z.boolean().meta({ description: 'A hint only: true is not a reservation.' }),
  })
  .meta({ id: 'AvailabilitySlot' });

/** A place in the availability change feed (`changes_cursor`, `after`, an event's `cursor`). */
export const ChangesCursor = z.string().meta({
  description:
    'An opaque cursor of the availability change feed (1 to 64 of A-Za-z0-9._:-); store it and send it back ' +
    'unchanged.',
});

export const AvailabilityResponse = z
  .object({
    venue_id: Uuid,
    date: z.string(),
    slots: z.array(AvailabilitySlot),
    changes_cursor: ChangesCursor.meta({
      description:
        'Where the change feed stands for this answer: GET /slots/availability/changes?after=<this> (or a stream ' +
        'resumed from it) lists every change these slots may not show.',
    }),
  })
  .meta({ id: 'Availability' });
export type AvailabilityResponse = z.infer<typeof AvailabilityResponse>;
