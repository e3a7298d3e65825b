/**
 * The partner booking API, typed: `createBookingClient()` is openapi-fetch over the types generated
 * from the service's /openapi.json (`schema.ts`), and `verifyWebhook()` checks a delivery by either
 * of its signatures.
 */
import createClient, { type Client, type ClientOptions } from 'openapi-fetch';
import type { paths } from './schema.ts';

export type { components, operations, paths } from './schema.ts';
export {
  verifyWebhook,
  type DetailsOf,
  type VerifyOptions,
  type WebhookEvent,
  type WebhookRejection,
} from './webhooks.ts';

export interface BookingClientOptions extends Omit<ClientOptions, 'baseUrl'> {
  /** Where the API is, e.g. `https://booking.example.com` (the client adds `/api/v1`). */
  baseUrl: string;
  /** Your API key, sent as `x-api-key` on every request. */
  apiKey: string;
}

/** A typed client: `client.GET('/bookings', { params: { query: { limit: 10 } } })`. */
export function createBookingClient(options: BookingClientOptions): Client<paths> {
  const { baseUrl, apiKey, headers, ...rest } = options;
  return createClient<paths>({
    ...rest,
    baseUrl: `${baseUrl.replace(/\/+$/, '')}/api/v1`,
    headers: { ...(headers as Record<string, string> | undefined), 'x-api-key': apiKey },
  });
}
