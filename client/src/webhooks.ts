/**
 * Verifies a webhook delivery of the partner booking API, by either signature it carries: the
 * spec's `X-Service-Signature` (`sha256=` + hex HMAC-SHA256 of "<timestamp>.<raw body>", keyed with
 * `secret_key`) or Standard Webhooks' `webhook-signature` (`v1,` + base64 HMAC-SHA256 of
 * "<webhook-id>.<webhook-timestamp>.<raw body>", keyed with the bytes `standard_webhooks_secret`
 * encodes). Give it the raw body bytes as received (not re-serialised JSON) and the request
 * headers; it compares in constant time and refuses timestamps more than `toleranceSeconds` away.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { components } from './schema.ts';

type Payload = components['schemas']['WebhookDeliveryPayload'];
type EventType = Payload['event_type'];

/** A delivery's body, narrowed by `event_type` (switch on it and `details` follows). */
export type WebhookEvent = {
  [T in EventType]: Omit<Payload, 'event_type' | 'details'> & { event_type: T; details: DetailsOf<T> };
}[EventType];

type SlotDetails = {
  resource_id: string;
  slot_start: string;
  slot_end: string;
  price_rupees: number;
};

/** What `details` carries for each event type. */
export type DetailsOf<T extends EventType> = T extends 'hold_created' | 'hold_cancelled' | 'hold_expired'
  ? SlotDetails & { hold_expiry_at: string }
  : T extends 'waitlist_promoted'
    ? SlotDetails & { waitlist_entry_id: string; slot_date: string; promoted_at: string; expires_at: string }
    : SlotDetails;

/** Why a delivery was refused. */
export type WebhookRejection =
  | 'missing_headers'
  | 'malformed_timestamp'
  | 'timestamp_outside_tolerance'
  | 'signature_mismatch'
  | 'malformed_body';

export interface VerifyOptions {
  /** The raw body, exactly as received. */
  rawBody: string | Uint8Array;
  /** The request's headers (any case; Node's IncomingHttpHeaders, a Headers object, or a plain record). */
  headers: Headers | Record<string, string | string[] | undefined>;
  /**
   * `secret_key` (verifies X-Service-Signature) or `standard_webhooks_secret` (whsec_…, verifies
   * webhook-signature), as subscribe or rotate returned it.
   */
  secret: string;
  /** Maximum age, either way, of the timestamp, in seconds. Default 300. */
  toleranceSeconds?: number;
  /** Unix seconds; defaults to the clock. */
  now?: number;
}

/** The event, or why the delivery must be rejected (answer it with a 4xx: it is retried). */
export function verifyWebhook(
  options: VerifyOptions,
): { ok: true; event: WebhookEvent } | { ok: false; reason: WebhookRejection } {
  const header = headerReader(options.headers);
  const standard = options.secret.startsWith('whsec_');
  const timestampText = header(standard ? 'webhook-timestamp' : 'x-service-timestamp');
  const signatures = header(standard ? 'webhook-signature' : 'x-service-signature');
  const webhookId = header('webhook-id');
  if (!timestampText || !signatures || (standard && !webhookId))
    return { ok: false, reason: 'missing_headers' };
  if (!/^\d{1,12}$/.test(timestampText)) return { ok: false, reason: 'malformed_timestamp' };
  const timestamp = Number(timestampText);
  const now = options.now ?? Math.floor(Date.now() / 1000);
  if (Math.abs(now - timestamp) > (options.toleranceSeconds ?? 300)) {
    return { ok: false, reason: 'timestamp_outside_tolerance' };
  }
  const body =
    typeof options.rawBody === 'string' ? Buffer.from(options.rawBody) : Buffer.from(options.rawBody);
  const expected = standard
    ? [
        `v1,${hmac(Buffer.from(options.secret.slice('whsec_'.length), 'base64'), `${webhookId}.${timestamp}.`, body, 'base64')}`,
      ]
    : [`sha256=${hmac(Buffer.from(options.secret, 'utf8'), `${timestamp}.`, body, 'hex')}`];
  // Standard Webhooks may list several signatures, space-separated (during a rotation): any one will do.
  const received = standard ? signatures.split(' ') : [signatures];
  if (!received.some((candidate) => expected.some((want) => constantTimeEqual(candidate, want)))) {
    return { ok: false, reason: 'signature_mismatch' };
  }
  try {
    return { ok: true, event: JSON.parse(body.toString('utf8')) as WebhookEvent };
  } catch {
    return { ok: false, reason: 'malformed_body' };
  }
}

function hmac(key: Buffer, prefix: string, body: Buffer, encoding: 'hex' | 'base64'): string {
  return createHmac('sha256', key).update(prefix).update(body).digest(encoding);
}

function constantTimeEqual(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}

function headerReader(headers: VerifyOptions['headers']): (name: string) => string | undefined {
  if (typeof (headers as Headers).get === 'function') {
    return (name) => (headers as Headers).get(name) ?? undefined;
  }
  const entries = Object.entries(headers as Record<string, string | string[] | undefined>);
  return (name) => {
    const value = entries.find(([key]) => key.toLowerCase() === name)?.[1];
    return Array.isArray(value) ? value[0] : value;
  };
}
