/** Helpers for waitlist tests: a join through the API. */
import { call, type CallResult, type TestServer } from './http.ts';

/** POST /waitlist for `customer_phone` 9812345678 unless the body says otherwise. */
export function join(
  server: TestServer,
  apiKey: string,
  body: { venue_id: string; resource_id: string; slot_date: string } & Record<string, unknown>,
): Promise<CallResult> {
  return call(server, 'POST', '/api/v1/waitlist', {
    key: apiKey,
    body: { customer_phone: '9812345678', ...body },
  });
}
