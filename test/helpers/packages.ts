/** Helpers for package tests: a purchase through the API. */
import { randomUUID } from 'node:crypto';
import { call, type CallResult, type TestServer } from './http.ts';

/** POST /packages/{packageId}/purchase with a fresh key unless one is given. */
export function purchase(
  server: TestServer,
  apiKey: string,
  packageId: string,
  body: Record<string, unknown> = {},
): Promise<CallResult> {
  return call(server, 'POST', `/api/v1/packages/${packageId}/purchase`, {
    key: apiKey,
    body: { customer_phone: '9812345678', payment_method: 'upi', idempotency_key: randomUUID(), ...body },
  });
}
