import { z } from 'zod';
import { EVENT_TYPES } from '../../db/queries/events.ts';
import { DateTime, httpUrl, IgnoredPartnerId, Uuid } from './shared.ts';

/** The event types a subscription may list: every type the service records. */
export const EventType = z.enum(EVENT_TYPES);

export const CreateSubscriptionBody = z.object({
  endpoint_url: httpUrl(2048).meta({
    format: 'uri',
    description: 'HTTPS; plain HTTP only on sandbox and local deployments.',
  }),
  event_types: z
    .array(EventType)
    .min(1)
    .max(EVENT_TYPES.length * 2),
  partner_id: IgnoredPartnerId,
});
export type CreateSubscriptionBody = z.infer<typeof CreateSubscriptionBody>;

export const WebhookSubscription = z
  .object({
    id: Uuid,
    partner_id: z.string(),
    event_types: z.array(EventType),
    endpoint_url: z.string(),
    is_active: z.boolean(),
    created_at: DateTime,
    updated_at: DateTime,
  })
  .meta({ id: 'WebhookSubscription' });
export type WebhookSubscription = z.infer<typeof WebhookSubscription>;

export const SubscriptionWithSecretResponse = z
  .object({
    success: z.boolean(),
    message: z.string(),
    secret_key: z.string().meta({ description: 'Shown only here: store it to verify deliveries.' }),
    standard_webhooks_secret: z.string().meta({
      description:
        'The same secret for Standard Webhooks libraries (`standardwebhooks`, `svix`): `whsec_` + base64 of ' +
        "`secret_key`'s UTF-8 bytes. Verifies the `webhook-signature` header as given.",
      example:
        'whsec_NWYyYjhjMGU0ZDZhMWYzYjllN2MyZDhhMGI0ZjZlMWMzYTVkN2I5ZjBlMmM0YTZiOGQwZjFlM2M1YTdiOWQyZQ==',
    }),
    data: WebhookSubscription,
  })
  .meta({ id: 'WebhookSubscriptionWithSecret' });

export const SubscriptionListResponse = z.object({
  success: z.boolean(),
  partner_id: z.string(),
  count: z.number().int(),
  data: z.array(WebhookSubscription),
});

export const SubscriptionParams = z.object({ id: Uuid });
export const DeliveryParams = z.object({ deliveryId: Uuid });

export const DeadLetter = z
  .object({
    delivery_id: Uuid.meta({ description: 'The last attempt (X-Delivery-Id).' }),
    event_id: Uuid,
    event_type: z.string(),
    subscription_id: Uuid,
    attempts: z.number().int(),
    last_status_code: z.number().int().nullable(),
    last_error: z.string().nullable(),
    created_at: DateTime,
    last_attempt_at: DateTime.nullable(),
  })
  .meta({ id: 'DeadLetter' });
export type DeadLetter = z.infer<typeof DeadLetter>;

export const ObservabilityResponse = z
  .object({
    success: z.boolean(),
    partner_id: z.string(),
    deliveries: z.object({
      pending: z.number().int(),
      delivered: z.number().int(),
      failed: z.number().int(),
      dead_letter: z.number().int(),
    }),
    dead_letters: z.array(DeadLetter).meta({ description: 'The 100 most recent, newest attempt first.' }),
  })
  .meta({ id: 'Observability' });

export const RedeliverResponse = z
  .object({ success: z.boolean(), message: z.string(), event_id: Uuid, status: z.literal('pending') })
  .meta({ id: 'Redelivery' });

/** What every delivery POSTs to the endpoint (documented as a callback). */
export const WebhookDeliveryPayload = z
  .object({
    event_id: Uuid.meta({ description: 'Stable across attempts; de-duplicate on it.' }),
    event_type: EventType,
    timestamp: DateTime.meta({
      description:
        'When the change happened (not when this attempt was sent); for `hold_expired`, the hold’s `hold_expiry_at`.',
    }),
    venue_id: Uuid,
    slot_id: z.string(),
    hold_id: z.string().nullable(),
    booking_id: z.string().nullable(),
    partner_id: z.string().meta({ description: 'The partner whose change it was; may differ from you.' }),
    details: z.record(z.string(), z.unknown()).meta({
      description: 'resource_id, slot_start, slot_end, price_rupees (and hold_expiry_at for holds).',
    }),
    delivery_id: Uuid.meta({ description: 'This attempt.' }),
  })
  .meta({ id: 'WebhookDeliveryPayload' });
