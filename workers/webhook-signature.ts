/**
 * Webhook signatures, two schemes over one secret.
 *
 * The spec's: HMAC-SHA256, keyed with the subscription's secret, over "<timestamp>.<raw body>",
 * sent as `X-Service-Signature: sha256=<hex>` beside `X-Service-Timestamp`. `verifyWebhook` is
 * what a partner's receiver runs (and what our tests run): it needs the raw body bytes, compares
 * in constant time, and refuses stale timestamps.
 *
 * Standard Webhooks (standardwebhooks.com, what the `standardwebhooks` and `svix` libraries
 * verify): `webhook-signature: v1,<base64 HMAC-SHA256 of "<webhook-id>.<webhook-timestamp>.<raw
 * body>">` keyed with the same secret's UTF-8 bytes, which partners are given as
 * `standard_webhooks_secret` (`whsec_` + base64 of those bytes).
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

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
  const mac = createHmac('sha256', Buffer.from(secret, 'utf8'))
    .update(`${webhookId}.${timestamp}.`)
    .update(rawBody)
    .digest('base64');
  return `v1,${mac}`;
}

/** The subscription's secret as Standard Webhooks libraries take it: whsec_ + base64 of its bytes. */
export function standardWebhooksSecret(secret: string): string {
  return `whsec_${Buffer.from(secret, 'utf8').toString('base64')}`;
}

/** Why a delivery was refused. */
export type WebhookRejection =
  | 'missing_headers'
  | 'malformed_timestamp'
  | 'timestamp_outside_tolerance'
  | 'signature_mismatch'
  | 'malformed_body';

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

/** What a receiver passes in: the raw body and the request headers (any case). */
export interface VerifyInput {
  rawBody: string | Buffer;
  headers: Record<string, string | string[] | undefined>;
  secret: string;
  /** Maximum age (either way) of X-Service-Timestamp, in seconds. The spec says 300. */
  toleranceSeconds?: number;
  /** Unix seconds; defaults to the clock. */
  now?: number;
}

/** Verifies a delivery: the parsed event, or the reason it must be rejected. */
export function verifyWebhook(
  input: VerifyInput,
): { ok: true; event: WebhookEvent } | { ok: false; reason: WebhookRejection } {
  const header = (name: string) => {
    const entry = Object.entries(input.headers).find(([key]) => key.toLowerCase() === name)?.[1];
    return Array.isArray(entry) ? entry[0] : entry;
  };
  const timestampText = header('x-service-timestamp');
  const signature = header('x-service-signature');
  if (!timestampText || !signature) return { ok: false, reason: 'missing_headers' };
  if (!/^\d{1,12}$/.test(timestampText)) return { ok: false, reason: 'malformed_timestamp' };
  const timestamp = Number(timestampText);
  const now = input.now ?? Math.floor(Date.now() / 1000);
  if (Math.abs(now - timestamp) > (input.toleranceSeconds ?? 300)) {
    return { ok: false, reason: 'timestamp_outside_tolerance' };
  }
  const expected = Buffer.from(signWebhook(input.secret, timestamp, input.rawBody));
  const received = Buffer.from(signature);
  if (expected.length !== received.length || !timingSafeEqual(expected, received)) {
    return { ok: false, reason: 'signature_mismatch' };
  }
  try {
    return { ok: true, event: JSON.parse(input.rawBody.toString()) as WebhookEvent };
  } catch {
    return { ok: false, reason: 'malformed_body' };
  }
}
