/**
 * Hand-picked inputs that must never regress: each is a 400 VALIDATION_ERROR naming its field
 * (years 0000, 0001 and 1899; U+0000 in keys, names, references, reasons and URLs). Random inputs
 * may or may not hit them on a given seed; these are sent on every run. The fuzz test sends them
 * first, on its own world, and counts them among its requests.
 */
import { randomUUID } from 'node:crypto';
import type { Violation } from './checks.ts';
import type { FuzzRequest } from './request.ts';
import type { World } from './world.ts';
import type { CallResult } from '../http.ts';
import type { Operation } from './openapi-operations.ts';

/** One case: the operation, its target and body in the world, and the field the 400 must name. */
export interface Case {
  title: string;
  operation: string;
  target: (w: World) => string;
  body?: (w: World) => unknown;
  field: string;
  in: 'body' | 'query' | 'path';
}

const holdBody = (w: World, overrides: object) => ({
  venue_id: w.venueId,
  resource_id: w.court,
  slot_start: w.slotStart,
  slot_duration_minutes: 60,
  idempotency_key: randomUUID(),
  ...overrides,
});
const confirmBody = (w: World, overrides: object) => ({
  hold_id: w.activeHold,
  payment_reference: 'pay-123',
  customer_name: 'Asha Rao',
  customer_phone: '9812345678',
  idempotency_key: randomUUID(),
  ...overrides,
});
const joinBody = (w: World, overrides: object) => ({
  venue_id: w.venueId,
  resource_id: w.court,
  slot_date: w.date,
  customer_phone: '9812345678',
  ...overrides,
});
const availabilityAt = (date: string) => (w: World) =>
  `/slots/availability?venue_id=${w.venueId}&date=${date}`;
const NUL_KEY = '\u0000nul\u0000';

/** The cases: years before 1900 in query and body dates, U+0000 in query and body strings. */
export const CASES: Case[] = [
  ...['0000-01-01', '0001-01-01', '1899-12-31'].map((date): Case => ({
    title: `GET /slots/availability?date=${date}`,
    operation: 'GET /slots/availability',
    target: availabilityAt(date),
    field: 'date',
    in: 'query',
  })),
  ...(['from=0000-01-01', 'from=0001-01-01', 'to=1899-12-31'] as const).map((query): Case => ({
    title: `GET /bookings?${query}`,
    operation: 'GET /bookings',
    target: () => `/bookings?${query}`,
    field: query.split('=')[0]!,
    in: 'query',
  })),
  {
    title: 'GET /bookings?customer_name=%00',
    operation: 'GET /bookings',
    target: () => '/bookings?customer_name=%00',
    field: 'customer_name',
    in: 'query',
  },
  ...['0000-01-01', '0001-01-01', '1899-12-31'].map((date): Case => ({
    title: `POST /waitlist with slot_date ${date}`,
    operation: 'POST /waitlist',
    target: () => '/waitlist',
    body: (w) => joinBody(w, { slot_date: date }),
    field: 'slot_date',
    in: 'body',
  })),
  {
    title: 'POST /waitlist with U+0000 in customer_name',
    operation: 'POST /waitlist',
    target: () => '/waitlist',
    body: (w) => joinBody(w, { customer_name: 'Asha\u0000Rao' }),
    field: 'customer_name',
    in: 'body',
  },
  {
    title: 'POST /bookings/hold with idempotency_key "\\u0000nul\\u0000"',
    operation: 'POST /bookings/hold',
    target: () => '/bookings/hold',
    body: (w) => holdBody(w, { idempotency_key: NUL_KEY }),
    field: 'idempotency_key',
    in: 'body',
  },
  ...['0001-01-01T00:00:00Z', '1899-12-31T23:00:00Z'].map((start): Case => ({
    title: `POST /bookings/hold with slot_start ${start}`,
    operation: 'POST /bookings/hold',
    target: () => '/bookings/hold',
    body: (w) => holdBody(w, { slot_start: start }),
    field: 'slot_start',
    in: 'body',
  })),
  {
    title: 'POST /bookings/confirm with idempotency_key "\\u0000nul\\u0000"',
    operation: 'POST /bookings/confirm',
    target: () => '/bookings/confirm',
    body: (w) => confirmBody(w, { idempotency_key: NUL_KEY }),
    field: 'idempotency_key',
    in: 'body',
  },
  {
    title: 'POST /bookings/confirm with U+0000 in payment_reference',
    operation: 'POST /bookings/confirm',
    target: () => '/bookings/confirm',
    body: (w) => confirmBody(w, { payment_reference: 'pay\u0000123' }),
    field: 'payment_reference',
    in: 'body',
  },
  ...(['cancel', 'refund'] as const).map((verb): Case => ({
    title: `POST /bookings/{bookingId}/${verb} with U+0000 in reason`,
    operation: `POST /bookings/{bookingId}/${verb}`,
    target: (w) => `/bookings/${w.spareBooking}/${verb}`,
    body: () => ({ idempotency_key: randomUUID(), reason: 'changed\u0000plans' }),
    field: 'reason',
    in: 'body',
  })),
  {
    title: 'POST /partner/holds/{holdId}/cancel with U+0000 in reason',
    operation: 'POST /partner/holds/{holdId}/cancel',
    target: (w) => `/partner/holds/${w.spareHold}/cancel`,
    body: () => ({ idempotency_key: randomUUID(), reason: 'changed\u0000plans' }),
    field: 'reason',
    in: 'body',
  },
  {
    title: 'POST /partner/webhooks with U+0000 in endpoint_url',
    operation: 'POST /partner/webhooks',
    target: () => '/partner/webhooks',
    body: (w) => ({
      endpoint_url: w.receiverUrl.replace('/hooks', '/ho\u0000oks'),
      event_types: ['hold_created'],
    }),
    field: 'endpoint_url',
    in: 'body',
  },
];

/** The case as a request of `operation`, with the valid key, tagged as hand-picked. */
export function caseRequest(c: Case, w: World, operation: Operation): FuzzRequest {
  const target = c.target(w);
  const [path, query = ''] = target.split('?') as [string, string?];
  const body = c.body?.(w);
  return {
    operation,
    path,
    query,
    credential: 'valid',
    body:
      body === undefined ? { kind: 'none' } : { kind: 'json', value: body, contentType: 'application/json' },
    tags: [`${c.in}.${c.field}:hand-picked`],
  };
}

/** What is wrong with the answer to a case: not a 400 VALIDATION_ERROR, or not naming its field. */
export function caseViolations(c: Case, response: CallResult): Violation[] {
  if (response.status !== 400 || response.body?.error !== 'VALIDATION_ERROR') {
    return [{ kind: 'expected-400', detail: `expected 400 VALIDATION_ERROR, got ${response.status}` }];
  }
  if (!response.body.details?.some((d: any) => d.field === c.field && d.in === c.in)) {
    return [
      {
        kind: 'expected-field',
        detail: `no details entry {field: ${c.field}, in: ${c.in}}: ${JSON.stringify(response.body.details)}`,
      },
    ];
  }
  return [];
}
