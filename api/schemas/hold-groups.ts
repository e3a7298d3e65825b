import { z } from 'zod';
import { Phone } from '../../db/rules/phone.ts';
import { ConfirmBody } from './bookings.ts';
import { DateTime, DateTimeInput, IdempotencyKey, IgnoredPartnerId, opaqueText, Uuid } from './shared.ts';

/** The most windows one group holds. */
export const MAX_GROUP_ITEMS = 8;

export const HoldGroupItem = z.object({
  resource_id: opaqueText({ min: 1, max: 100 }).meta({ description: 'From discovery.' }),
  slot_start: DateTimeInput.meta({ description: 'A slot_start returned by availability.' }),
  slot_duration_minutes: z
    .number()
    .int()
    .min(15)
    .max(1440)
    .meta({ description: "A whole multiple of the resource's duration_minutes, within one day's hours." }),
});

export const CreateHoldGroupBody = z.object({
  venue_id: Uuid,
  items: z
    .array(HoldGroupItem)
    .min(1)
    .max(MAX_GROUP_ITEMS)
    .meta({
      description:
        `1 to ${MAX_GROUP_ITEMS} windows at the venue, held all or nothing. Items that overlap each other (on ` +
        'one resource, or a convertible whole and its part) are 400.',
    }),
  customer_phone: Phone.optional().meta({
    description: 'When the customer has a membership at the venue, its discount applies to every item.',
  }),
  idempotency_key: IdempotencyKey,
  partner_id: IgnoredPartnerId,
});
export type CreateHoldGroupBody = z.infer<typeof CreateHoldGroupBody>;

export const HoldGroupParams = z.object({ holdGroupId: Uuid });

export const ConfirmHoldGroupBody = ConfirmBody.omit({ hold_id: true }).extend({
  use_package_credit: z
    .boolean()
    .optional()
    .meta({
      description:
        'Pay with package credits, one per hold, all or none: when the customer’s active purchases at the ' +
        'venue hold enough credits together, each booking takes one (the purchase expiring first first).',
    }),
});
export type ConfirmHoldGroupBody = z.infer<typeof ConfirmHoldGroupBody>;

const HoldGroupStatus = z.enum(['ACTIVE', 'CONFIRMED', 'CANCELLED', 'EXPIRED']);

export const HoldGroupHold = z
  .object({
    item_index: z.number().int().meta({ description: "The item's position in `items`." }),
    hold_id: Uuid.meta({ description: 'The hold its events name.' }),
    slot_id: Uuid,
    resource_id: z.string(),
    slot_start: DateTime,
    slot_end: DateTime,
    price_rupees: z.number().int().meta({ description: 'What a single hold of the window would cost.' }),
    status: z.enum(['ACTIVE', 'CANCELLED', 'EXPIRED', 'BOOKED', 'REFUNDED']).meta({
      description:
        'Before the confirm, the hold’s (ACTIVE reads EXPIRED from hold_expiry_at on); after it, its ' +
        'booking’s (BOOKED, CANCELLED or REFUNDED).',
    }),
    booking_id: Uuid.nullable().meta({ description: 'Null before the confirm.' }),
  })
  .meta({ id: 'HoldGroupHold' });

export const HoldGroupResponse = z
  .object({
    hold_group_id: Uuid,
    venue_id: Uuid,
    series_id: Uuid.nullable().meta({ description: 'The series the group holds, else null.' }),
    status: HoldGroupStatus.meta({
      description:
        'ACTIVE reads EXPIRED from hold_expiry_at on, whether or not the expiry has been processed. CONFIRMED ' +
        'and CANCELLED are final: a CONFIRMED group stays so whatever later happens to its bookings.',
    }),
    hold_expiry_at: DateTime.meta({
      description: "Creation + the venue's hold time; the same for every hold.",
    }),
    price_rupees: z.number().int().meta({ description: "The sum of the holds' prices." }),
    created_at: DateTime,
    holds: z.array(HoldGroupHold).meta({ description: 'One per item, in item order.' }),
  })
  .meta({ id: 'HoldGroup' });
export type HoldGroupResponse = z.infer<typeof HoldGroupResponse>;

export const HoldGroupBooking = z
  .object({
    item_index: z.number().int(),
    booking_id: Uuid,
    hold_id: Uuid,
    slot_id: Uuid,
    status: z.literal('BOOKED'),
    booked_at: DateTime,
    price_rupees: z.number().int(),
    payment_method: z
      .enum(['package'])
      .nullable()
      .meta({ description: '`package` when a package credit paid it; null for a paid booking.' }),
    package_purchase_id: Uuid.nullable().meta({ description: 'The purchase its credit came from.' }),
  })
  .meta({ id: 'HoldGroupBooking' });

export const HoldGroupConfirmResponse = z
  .object({
    hold_group_id: Uuid,
    status: z.literal('CONFIRMED'),
    price_rupees: z.number().int(),
    package_credits_consumed: z.number().int().optional().meta({
      description:
        'Credits taken (one per hold, or 0); present exactly when the request set use_package_credit.',
    }),
    bookings: z.array(HoldGroupBooking).meta({ description: 'One per hold, in item order.' }),
  })
  .meta({ id: 'HoldGroupConfirmation' });
export type HoldGroupConfirmResponse = z.infer<typeof HoldGroupConfirmResponse>;
