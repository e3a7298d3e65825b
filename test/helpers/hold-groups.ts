/**
 * Helpers for hold-group tests: the four routes (any answer, for tests that inspect it), an item of
 * a grid slot, and a group placed as setup (`placeGroup`: it throws unless 201).
 */
import { randomUUID } from 'node:crypto';
import type { Knex } from '../../db/postgres/knex.ts';
import { gridSlots, type BookingWorld } from './booking.ts';
import { call, type CallResult, type TestServer } from './http.ts';

/** One item of a group, as sent. */
export interface Item {
  resource_id: string;
  slot_start: string;
  slot_duration_minutes: number;
}

/** The item for slot `index` of `resource`'s grid `daysAhead` days from today, `minutes` long. */
export async function itemOf(
  db: Knex,
  venueId: string,
  resource: string,
  index: number,
  { daysAhead = 1, minutes = 60 }: { daysAhead?: number; minutes?: number } = {},
): Promise<Item> {
  const slot = (await gridSlots(db, venueId, resource, daysAhead))[index];
  if (!slot) throw new Error(`no slot ${index} of ${resource} ${daysAhead} days ahead`);
  return { resource_id: resource, slot_start: slot.slot_start.toISOString(), slot_duration_minutes: minutes };
}

/** POST /bookings/hold-groups with a fresh idempotency key unless one is given. */
export function createGroup(
  server: TestServer,
  apiKey: string,
  body: { venue_id: string } & Record<string, unknown>,
): Promise<CallResult> {
  return call(server, 'POST', '/api/v1/bookings/hold-groups', {
    key: apiKey,
    body: { idempotency_key: randomUUID(), ...body },
  });
}

/** GET /bookings/hold-groups/{id}. */
export function readGroup(server: TestServer, apiKey: string, groupId: string): Promise<CallResult> {
  return call(server, 'GET', `/api/v1/bookings/hold-groups/${groupId}`, { key: apiKey });
}

/** POST /bookings/hold-groups/{id}/confirm with sensible customer fields and a fresh key unless given. */
export function confirmGroup(
  server: TestServer,
  apiKey: string,
  groupId: string,
  body: Record<string, unknown> = {},
): Promise<CallResult> {
  return call(server, 'POST', `/api/v1/bookings/hold-groups/${groupId}/confirm`, {
    key: apiKey,
    body: {
      payment_reference: 'pay-group-1',
      customer_name: 'Asha Rao',
      customer_phone: '9812345678',
      idempotency_key: randomUUID(),
      ...body,
    },
  });
}

/** POST /bookings/hold-groups/{id}/cancel with a fresh key unless given. */
export function releaseGroup(
  server: TestServer,
  apiKey: string,
  groupId: string,
  body: Record<string, unknown> = {},
): Promise<CallResult> {
  return call(server, 'POST', `/api/v1/bookings/hold-groups/${groupId}/cancel`, {
    key: apiKey,
    body: { idempotency_key: randomUUID(), ...body },
  });
}

/** Places a group of `items` for the world's partner, as setup: throws unless 201. */
export async function placeGroup(
  server: TestServer,
  world: Pick<BookingWorld, 'apiKey' | 'venueId'>,
  items: Item[],
  body: Record<string, unknown> = {},
): Promise<{ groupId: string; holdIds: string[]; response: CallResult }> {
  const response = await createGroup(server, world.apiKey, { venue_id: world.venueId, items, ...body });
  if (response.status !== 201) throw new Error(`hold group: ${response.status} ${response.text}`);
  return {
    groupId: response.body.hold_group_id as string,
    holdIds: (response.body.holds as { hold_id: string }[]).map((h) => h.hold_id),
    response,
  };
}

/** Makes every hold of a group past its expiry, by a second unless told, without running its job (as if the job were late). */
export async function makeGroupOverdue(db: Knex, groupId: string, secondsAgo = 1): Promise<void> {
  // One instant for the group and its holds, as placing them gives.
  const { rows } = await db.raw<{ rows: { past: Date }[] }>(
    'select now() - make_interval(secs => ?) as past',
    [secondsAgo],
  );
  const past = rows[0]!.past;
  await db('hold_groups').where({ id: groupId }).update({ hold_expiry_at: past });
  await db('holds').where({ hold_group_id: groupId }).update({ hold_expiry_at: past });
  await db('reservations')
    .whereIn('hold_id', db('holds').select('id').where({ hold_group_id: groupId }))
    .update({ expires_at: past });
}
