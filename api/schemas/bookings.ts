import { z } from 'zod';
import { Phone } from '../../db/rules/phone.ts';
import {
  DateOnly,
  DateTime,
  freeText,
  IdempotencyKey,
  IgnoredPartnerId,
  queryInteger,
  Uuid,
} from './shared.ts';

export const ConfirmBody = z.object({
  hold_id: Uuid,
  payment_reference: freeText({ min: 1, max: 255 }).meta({ description: 'Opaque; not verified. Trimmed.' }),
  customer_name: freeText({ min: 2, max: 100 }).meta({ description: 'Trimmed; 2 to 100 characters.' }),
  customer_phone: Phone,
  customer_email: z.email().max(254).optional(),
  idempotency_key: IdempotencyKey,
  use_package_credit: z
    .boolean()
    .optional()
    .meta({ description: "Pay with one credit of the customer's package at this venue, if one is left." }),
  partner_id: IgnoredPartnerId,
});
export type ConfirmBody = z.infer<typeof ConfirmBody>;

export const ConfirmResponse = z
  .object({
    booking_id: Uuid,
    slot_id: Uuid,
    status: z.literal('BOOKED'),
    booked_at: DateTime,
    price_rupees: z.number().int(),
    package_credit_consumed: z
      .boolean()
      .optional()
      .meta({ description: 'Present only when the request set use_package_credit.' }),
  })
  .meta({ id: 'ConfirmBookingResponse' });
export type ConfirmResponse = z.infer<typeof ConfirmResponse>;

export const BookingParams = z.object({ bookingId: Uuid });

const BookingStatus = z.enum(['BOOKED', 'CANCELLED', 'REFUNDED']);

export const BookingListItem = z
  .object({
    booking_id: Uuid,
    hold_id: Uuid,
    slot_id: Uuid,
    venue_id: Uuid,
    partner_id: z.string(),
    resource_id: z.string(),
    slot_start: DateTime,
    slot_end: DateTime,
    status: BookingStatus,
    booked_at: DateTime,
    price_rupees: z.number().int(),
    customer_name: z.string(),
    customer_phone: z.string(),
    payment_method: z.string().nullable(),
    package_purchase_id: Uuid.nullable(),
    hold_group_id: Uuid.nullable().meta({
      description: 'The hold group it was confirmed with; null for a booking of a single hold.',
    }),
    series_id: Uuid.nullable().meta({ description: 'The recurring series it is of; null otherwise.' }),
  })
  .meta({ id: 'BookingListItem' });
export type BookingListItem = z.infer<typeof BookingListItem>;

export const BookingDetail = BookingListItem.extend({
  payment_reference: z.string(),
  customer_email: z.string().nullable(),
  cancelled_at: DateTime.nullable(),
  refunded_at: DateTime.nullable(),
}).meta({ id: 'BookingDetail' });
export type BookingDetail = z.infer<typeof BookingDetail>;

export const BookingListQuery = z
  .object({
    venue_id: Uuid.optional(),
    from: DateOnly.optional().meta({ description: 'Venue-local date of the slot, inclusive.' }),
    to: DateOnly.optional().meta({ description: 'Venue-local date of the slot, inclusive.' }),
    limit: queryInteger(1, 100).default(50),
    customer_phone: Phone.optional(),
    customer_name: freeText({ min: 1, max: 100 })
      .optional()
      .meta({ description: 'Case-insensitive substring.' }),
    series_id: Uuid.optional().meta({
      description: 'Only your bookings of this series (none for an unknown series, or another partner’s).',
    }),
    starting_after: Uuid.optional().meta({
      description:
        'The `booking_id` of the last booking of the previous page: the next page, with the same filters. ' +
        'One that is not your booking is 400.',
    }),
  })
  .refine((q) => !q.from || !q.to || q.from <= q.to, {
    message: 'from must not be after to',
    path: ['from'],
  });

export const BookingListResponse = z.object({
  bookings: z.array(BookingListItem),
  has_more: z.boolean().meta({
    description:
      'Whether at least one more booking matches after the last of this page; ask for it with ' +
      '`starting_after`. False on a page that ends at the last match, even a full one.',
  }),
});

export const BookingChangeResponse = z
  .object({ message: z.string(), booking_id: Uuid, status: BookingStatus })
  .meta({ id: 'BookingChangeResponse' });
export type BookingChangeResponse = z.infer<typeof BookingChangeResponse>;
