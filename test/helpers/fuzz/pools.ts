/**
 * The pools of real values the fuzz draws from, by pool name (`world.ts` fills them): which
 * pool a field draws from, by the field's name, and how the pools grow while fuzzing. A record one
 * operation creates (a hold, a booking, a subscription…) joins its pool, so that the operations
 * after it act on it: a hold made by the fuzz gets confirmed or released by the fuzz.
 */
import type { CallResult } from '../http.ts';
import type { Operation } from './openapi-operations.ts';
import type { FieldRef } from './tagged-samples.ts';

/** Real values by pool name (`venue`, `hold`, `slot_start`…). */
export type Pools = Record<string, unknown[]>;

/** The pool of a field whose name is not its pool's name. */
const POOL_BY_NAME: Record<string, string> = {
  venueId: 'venue',
  venue_id: 'venue',
  resource_id: 'resource',
  holdId: 'releasable',
  hold_id: 'hold',
  bookingId: 'booking',
  packageId: 'package',
  purchaseId: 'purchase',
  entryId: 'entry',
  deliveryId: 'delivery',
  date: 'date',
  slot_date: 'date',
  from: 'date',
  to: 'date',
};

/** The generator's pool: real values of the world for the fields that name them. */
export function poolOf(pools: Pools, field: FieldRef): readonly unknown[] | undefined {
  if (field.location === 'path' && field.name === 'id') return pools.subscription;
  return pools[POOL_BY_NAME[field.name] ?? field.name];
}

/** Where a created record's id goes, so that later operations act on it (confirm a new hold…). */
const CREATED: Record<string, [pool: string, id: (body: any) => unknown]> = {
  'POST /bookings/hold': ['hold', (b) => b.hold_id],
  'POST /bookings/confirm': ['booking', (b) => b.booking_id],
  'POST /packages/{packageId}/purchase': ['purchase', (b) => b.purchase?.id],
  'POST /waitlist': ['entry', (b) => b.entry?.id],
  'POST /partner/webhooks': ['subscription', (b) => b.data?.id],
};

/**
 * Adds the id a 201 created to its pool. Pools are read when an operation's arbitrary is built,
 * so the ids made while fuzzing one operation feed the operations after it (in document order).
 */
export function grow(pools: Pools, op: Operation, response: CallResult): void {
  const created = CREATED[`${op.method} ${op.path}`];
  const id = response.status === 201 ? created?.[1](response.body) : undefined;
  const pool = created && pools[created[0]];
  if (typeof id !== 'string' || !pool || pool.includes(id)) return;
  pool.push(id);
  if (created[0] === 'hold' && pool.length % 3 === 0) pools.releasable!.push(id);
}
