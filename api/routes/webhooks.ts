/** Webhooks: subscribe, list, rotate a secret, observe deliveries, redeliver a dead letter. */
import {
  DeliveryNotDeadLetteredError,
  DeliveryNotFoundError,
  SubscriptionLimitReachedError,
  SubscriptionNotFoundError,
} from '../errors.ts';
import { presentDeadLetter, presentSubscription } from '../presenters/webhook.ts';
import { standardWebhooksSecret } from '../../db/rules/webhook-signature.ts';
import { defineRoute } from '../route.ts';
import { listSubscriptions, rotateSecret, subscribe } from '../use-cases/manage-webhooks.ts';
import { observeDeliveries, redeliver } from '../use-cases/observe-deliveries.ts';
import {
  CreateSubscriptionBody,
  DeliveryParams,
  ObservabilityResponse,
  RedeliverResponse,
  SubscriptionListResponse,
  SubscriptionParams,
  SubscriptionWithSecretResponse,
  WebhookDeliveryPayload,
} from '../schemas/webhooks.ts';

const tag = 'Webhooks';
const subscriptionExample = {
  id: 'c2f1e0d9-8b7a-4c6d-9e5f-4a3b2c1d0e9f',
  partner_id: '0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d',
  event_types: ['booking_created', 'booking_cancelled'],
  endpoint_url: 'https://partner.example.com/webhooks/bookings',
  is_active: true,
  created_at: '2026-11-22T10:00:00.000Z',
  updated_at: '2026-11-22T10:00:00.000Z',
};
const secretExample = '5f2b8c0e4d6a1f3b9e7c2d8a0b4f6e1c3a5d7b9f0e2c4a6b8d0f1e3c5a7b9d2e';
const standardSecretExample = standardWebhooksSecret(secretExample);

export const webhookRoutes = [
  defineRoute({
    method: 'POST',
    path: '/partner/webhooks',
    operationId: 'createWebhookSubscription',
    summary: 'Subscribe to events',
    description:
      'Every change of a hold or booking at a venue granted to you — yours or another partner’s — is POSTed to ' +
      '`endpoint_url`, signed with `secret_key` (returned only here and on rotate). At most 10 subscriptions. ' +
      'Endpoints resolving to private addresses are refused outside local deployments. There is no unsubscribe.',
    tag,
    auth: true,
    body: CreateSubscriptionBody,
    bodyExample: {
      endpoint_url: 'https://partner.example.com/webhooks/bookings',
      event_types: ['booking_created', 'booking_cancelled'],
    },
    responses: {
      201: {
        description: 'Subscribed; store the secret now.',
        schema: SubscriptionWithSecretResponse,
        example: {
          success: true,
          message: 'Subscribed.',
          secret_key: secretExample,
          standard_webhooks_secret: standardSecretExample,
          data: subscriptionExample,
        },
      },
    },
    errors: [SubscriptionLimitReachedError],
    callbacks: {
      delivery: {
        expression: '{$request.body#/endpoint_url}',
        summary: 'A delivery',
        description:
          'Verify `X-Service-Signature` = `sha256=` + hex HMAC-SHA256 of `X-Service-Timestamp` + "." + the raw body, ' +
          'keyed with your secret (or the `webhook-*` headers with a Standard Webhooks library and ' +
          '`standard_webhooks_secret`); reject timestamps more than 300 s away; de-duplicate on `event_id` (delivery is ' +
          'at least once, in any order). Answer 2xx within 10 s; otherwise the attempt is retried after 5, 15, 30 ' +
          'and 60 minutes, five attempts in all, then dead-lettered.',
        body: WebhookDeliveryPayload,
        headers: {
          'X-Webhook-Event': 'The event_type.',
          'X-Delivery-Id': 'This attempt (delivery_id).',
          'X-Delivery-Attempt': 'The attempt number, 1 for the first.',
          'X-Service-Timestamp': 'Unix seconds when this attempt was sent.',
          'X-Service-Signature': 'sha256=<hex HMAC-SHA256 of "<timestamp>.<raw body>">.',
          'webhook-id': 'Standard Webhooks: the event_id, the same on every attempt and redelivery.',
          'webhook-timestamp': 'Standard Webhooks: the same Unix seconds as X-Service-Timestamp.',
          'webhook-signature':
            'Standard Webhooks: v1,<base64 HMAC-SHA256 of "<webhook-id>.<webhook-timestamp>.<raw body>">, keyed ' +
            'with the UTF-8 bytes of secret_key; verify with standard_webhooks_secret.',
        },
      },
    },
    async handler({ partnerId, body }, { db, config }) {
      const row = await subscribe(db, config, partnerId, body);
      return {
        status: 201,
        body: {
          success: true,
          message: 'Subscribed.',
          secret_key: row.secret_key,
          standard_webhooks_secret: standardWebhooksSecret(row.secret_key),
          data: presentSubscription(row),
        },
      };
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/partner/webhooks',
    operationId: 'listWebhookSubscriptions',
    summary: 'List your subscriptions',
    description: 'Secrets are never shown here; rotate a secret to get a new one.',
    tag,
    auth: true,
    responses: {
      200: {
        description: 'Your subscriptions.',
        schema: SubscriptionListResponse,
        example: {
          success: true,
          partner_id: subscriptionExample.partner_id,
          count: 1,
          data: [subscriptionExample],
        },
      },
    },
    async handler({ partnerId }, { db }) {
      const rows = await listSubscriptions(db, partnerId);
      return {
        status: 200,
        body: {
          success: true,
          partner_id: partnerId,
          count: rows.length,
          data: rows.map(presentSubscription),
        },
      };
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/partner/webhooks/{id}/rotate-secret',
    operationId: 'rotateWebhookSecret',
    summary: 'Rotate a subscription’s secret',
    description: 'Returns the new secret, once. Every delivery attempt from now on is signed with it.',
    tag,
    auth: true,
    params: SubscriptionParams,
    responses: {
      200: {
        description: 'The new secret.',
        schema: SubscriptionWithSecretResponse,
        example: {
          success: true,
          message: 'Secret rotated.',
          secret_key: secretExample,
          standard_webhooks_secret: standardSecretExample,
          data: subscriptionExample,
        },
      },
    },
    errors: [SubscriptionNotFoundError],
    async handler({ partnerId, params }, { db }) {
      const row = await rotateSecret(db, partnerId, params.id);
      return {
        status: 200,
        body: {
          success: true,
          message: 'Secret rotated.',
          secret_key: row.secret_key,
          standard_webhooks_secret: standardWebhooksSecret(row.secret_key),
          data: presentSubscription(row),
        },
      };
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/partner/observability',
    operationId: 'getDeliveryObservability',
    summary: 'Your webhook deliveries',
    description:
      'How many of your deliveries are pending, delivered, failed (awaiting a retry) and dead-lettered, and the ' +
      'most recent dead letters with their last attempt.',
    tag,
    auth: true,
    responses: {
      200: {
        description: 'Delivery counts and dead letters.',
        schema: ObservabilityResponse,
        example: {
          success: true,
          partner_id: subscriptionExample.partner_id,
          deliveries: { pending: 0, delivered: 41, failed: 1, dead_letter: 1 },
          dead_letters: [
            {
              delivery_id: '8e7d6c5b-4a39-4281-b0c1-d2e3f4a5b6c7',
              event_id: '1a2b3c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d',
              event_type: 'booking_created',
              subscription_id: subscriptionExample.id,
              attempts: 5,
              last_status_code: 503,
              last_error: 'the endpoint answered 503',
              created_at: '2026-11-22T10:00:00.000Z',
              last_attempt_at: '2026-11-22T11:50:00.000Z',
            },
          ],
        },
      },
    },
    async handler({ partnerId }, { db }) {
      const { counts, deadLetters } = await observeDeliveries(db, partnerId);
      return {
        status: 200,
        body: {
          success: true,
          partner_id: partnerId,
          deliveries: counts,
          dead_letters: deadLetters.map(presentDeadLetter),
        },
      };
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/partner/webhooks/deliveries/{deliveryId}/redeliver',
    operationId: 'redeliverWebhook',
    summary: 'Redeliver a dead letter',
    description:
      'Additive to v1. Puts a dead-lettered delivery of yours (named by the `delivery_id` of any of its attempts, ' +
      'as observability shows) back in line: the same event and `event_id`, five fresh attempts, the first now.',
    tag,
    auth: true,
    params: DeliveryParams,
    responses: {
      202: {
        description: 'Queued.',
        schema: RedeliverResponse,
        example: {
          success: true,
          message: 'Redelivery queued.',
          event_id: '1a2b3c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d',
          status: 'pending',
        },
      },
    },
    errors: [DeliveryNotFoundError, DeliveryNotDeadLetteredError],
    async handler({ partnerId, params }, { db }) {
      const delivery = await redeliver(db, partnerId, params.deliveryId);
      return {
        status: 202,
        body: {
          success: true,
          message: 'Redelivery queued.',
          event_id: delivery.event_id,
          status: 'pending',
        },
      };
    },
  }),
];
