import { z } from 'zod';
import { Uuid } from './shared.ts';

/** Path of the single-venue routes. */
export const VenueParams = z.object({ venueId: Uuid });
export type VenueParams = z.infer<typeof VenueParams>;

/** PartnerVenue. `timezone` is additive: venue-local dates and hours are in this IANA zone. */
export const Venue = z
  .object({
    venue_id: Uuid,
    name: z.string(),
    address: z.string(),
    city: z.string(),
    status: z.enum(['active', 'paused', 'archived']),
    timezone: z.string().meta({ description: 'IANA time zone of the venue, e.g. Asia/Kolkata.' }),
  })
  .meta({ id: 'Venue' });
export type Venue = z.infer<typeof Venue>;

const TimeOfDay = z.string().regex(/^\d{2}:\d{2}$/);

/** PartnerResource. */
export const Resource = z
  .object({
    resource_id: z.string().meta({ description: 'Opaque; copy it from discovery, never construct it.' }),
    venue_id: Uuid,
    resource_type: z.string(),
    sport_category: z.string(),
    duration_minutes: z.number().int(),
    price_rupees: z.number().int().meta({ description: 'Base price; availability has the price of a date.' }),
    operating_hours_start: TimeOfDay,
    operating_hours_end: TimeOfDay,
    closed_on: z
      .string()
      .optional()
      .meta({ description: 'Closed weekdays, e.g. "Monday,Sunday". Absent when open every day.' }),
  })
  .meta({ id: 'Resource' });
export type Resource = z.infer<typeof Resource>;

export const VenueListResponse = z.object({ data: z.array(Venue) });
export const VenueResponse = z.object({ data: Venue });
export const ResourceListResponse = z.object({
  success: z.boolean(),
  count: z.number().int(),
  data: z.array(Resource),
});
