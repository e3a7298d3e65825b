import { z } from 'zod';
import { Phone } from '../../db/rules/phone.ts';
import { WAITLIST_STATUSES } from '../../db/queries/waitlist-entries.ts';
import { DateOnly, DateTime, freeText, IgnoredPartnerId, opaqueText, Uuid } from './shared.ts';

const ResourceId = opaqueText({ min: 1, max: 100 }).meta({
  description: 'A resource of the venue, from discovery.',
});
const SlotDate = DateOnly.meta({ description: 'Venue-local date.' });

export const JoinWaitlistBody = z.object({
  venue_id: Uuid,
  resource_id: ResourceId,
  slot_date: SlotDate,
  customer_phone: Phone,
  customer_name: freeText({ min: 1, max: 100 }).nullable().optional(),
  expires_in_days: z
    .number()
    .int()
    .min(1)
    .max(30)
    .default(7)
    .meta({ description: 'The entry expires this many days after the join (or re-join).' }),
  partner_id: IgnoredPartnerId,
});
export type JoinWaitlistBody = z.infer<typeof JoinWaitlistBody>;

export const WaitlistEntry = z
  .object({
    id: Uuid,
    venue_id: Uuid,
    resource_id: z.string(),
    slot_date: DateOnly,
    slot_id: z
      .string()
      .nullable()
      .meta({ description: 'Once promoted: the first slot of the freed window.' }),
    customer_phone: z.string(),
    customer_name: z.string().nullable(),
    partner_id: z.string(),
    status: z.enum(WAITLIST_STATUSES),
    promoted_at: DateTime.nullable(),
    expires_at: DateTime,
    created_at: DateTime,
    updated_at: DateTime,
  })
  .meta({ id: 'WaitlistEntry' });
export type WaitlistEntry = z.infer<typeof WaitlistEntry>;

export const WaitlistEntryResponse = z.object({ entry: WaitlistEntry }).meta({ id: 'WaitlistEntryResponse' });

export const WaitlistQuery = z.object({
  venue_id: Uuid,
  resource_id: ResourceId,
  slot_date: SlotDate,
  status: z.enum(WAITLIST_STATUSES).optional(),
});

export const WaitlistListResponse = z
  .object({ data: z.array(WaitlistEntry) })
  .meta({ id: 'WaitlistEntryList' });

export const WaitlistEntryParams = z.object({ entryId: Uuid });
