import { z } from 'zod';
import { Phone } from '../../db/rules/phone.ts';
import { DateTime, DateTimeInput, IdempotencyKey, IgnoredPartnerId, opaqueText, Uuid } from './shared.ts';

export const CreateHoldBody = z.object({
  venue_id: Uuid,
  resource_id: opaqueText({ min: 1, max: 100 }).meta({ description: 'From discovery.' }),
  slot_start: DateTimeInput.meta({ description: 'A slot_start returned by availability.' }),
  slot_duration_minutes: z
    .number()
    .int()
    .min(15)
    .max(1440)
    .meta({ description: "A whole multiple of the resource's duration_minutes, within one day's hours." }),
  idempotency_key: IdempotencyKey,
  customer_phone: Phone.optional().meta({
    description: 'When the customer has a membership, its discount applies.',
  }),
  partner_id: IgnoredPartnerId,
});
export type CreateHoldBody = z.infer<typeof CreateHoldBody>;

export const HoldResponse = z
  .object({
    hold_id: Uuid,
    slot_id: Uuid,
    status: z.literal('ACTIVE'),
    hold_expiry_at: DateTime,
    price_rupees: z.number().int(),
  })
  .meta({ id: 'CreateHoldResponse' });
export type HoldResponse = z.infer<typeof HoldResponse>;

export const HoldParams = z.object({ holdId: Uuid });

export const CancelHoldResponse = z
  .object({ message: z.string(), hold_id: Uuid, status: z.literal('CANCELLED') })
  .meta({ id: 'CancelHoldResponse' });
export type CancelHoldResponse = z.infer<typeof CancelHoldResponse>;
