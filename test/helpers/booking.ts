/**
 * Helpers for booking tests: a granted venue with resources, the grid slots of a future day, and
 * short calls for the booking endpoints.
 */
import { randomUUID } from 'node:crypto';
import type { Knex } from '../../db/postgres/knex.ts';
import * as slots from '../../db/queries/slots.ts';
import { makePartner, makeResource, makeVenue } from './factories.ts';
import { call, type CallResult, type TestServer } from './http.ts';

/** A partner with a granted venue that has a court and a full pitch made of two halves. */
export interface BookingWorld {
  partnerId: string;
  apiKey: string;
  venueId: string;
  court: string;
  halfA: string;
  halfB: string;
  full: string;
}

/** Makes a BookingWorld; venue overrides (hold seconds, lead time…) go to the venue. */
export async function makeBookingWorld(
  db: Knex,
  venue: Parameters<typeof makeVenue>[1] = {},
): Promise<BookingWorld> {
  const { partnerId, apiKey } = await makePartner(db, { rateLimit: 100_000 });
  const venueId = await makeVenue(db, { ...venue, grantTo: [partnerId, ...(venue.grantTo ?? [])] });
  const court = await makeResource(db, { venueId, opensAt: '06:00', closesAt: '22:00' });
  const halfA = await makeResource(db, { venueId, resourceType: 'half', priceRupees: 1000 });
  const halfB = await makeResource(db, { venueId, resourceType: 'half', priceRupees: 1000 });
  const full = await makeResource(db, {
    venueId,
    resourceType: 'full',
    priceRupees: 1800,
    parts: [halfA, halfB],
  });
  return { partnerId, apiKey, venueId, court, halfA, halfB, full };
}

/** The venue-local date `daysAhead` days from today, as YYYY-MM-DD. */
export async function localDate(db: Knex, venueId: string, daysAhead: number): Promise<string> {
  const { rows } = await db.raw<{ rows: { d: string }[] }>(
    "select to_char((now() at time zone timezone)::date + ?::integer, 'YYYY-MM-DD') as d from venues where id = ?",
    [daysAhead, venueId],
  );
  return rows[0]!.d;
}

/** A grid slot with its times as Dates, for arithmetic in tests. */
export type GridSlot = Omit<slots.SlotRow, 'slot_start' | 'slot_end'> & { slot_start: Date; slot_end: Date };

/** The grid slots of one resource `daysAhead` days from today. */
export async function gridSlots(
  db: Knex,
  venueId: string,
  resourceId: string,
  daysAhead = 1,
): Promise<GridSlot[]> {
  const rows = await slots.forDate(db, venueId, await localDate(db, venueId, daysAhead), resourceId);
  return rows.map((s) => ({ ...s, slot_start: new Date(s.slot_start), slot_end: new Date(s.slot_end) }));
}

/** POST /bookings/hold with a fresh idempotency key unless one is given. */
export function hold(
  server: TestServer,
  key: string,
  body: {
    venue_id: string;
    resource_id: string;
    slot_start: string | Date;
    slot_duration_minutes?: number;
  } & Record<string, unknown>,
): Promise<CallResult> {
  const start = body.slot_start instanceof Date ? body.slot_start.toISOString() : body.slot_start;
  return call(server, 'POST', '/api/v1/bookings/hold', {
    key,
    body: { slot_duration_minutes: 60, idempotency_key: randomUUID(), ...body, slot_start: start },
  });
}

/** POST /bookings/confirm with sensible customer fields and a fresh key unless given. */
export function confirm(
  server: TestServer,
  key: string,
  body: { hold_id: string } & Record<string, unknown>,
): Promise<CallResult> {
  return call(server, 'POST', '/api/v1/bookings/confirm', {
    key,
    body: {
      payment_reference: 'pay-123',
      customer_name: 'Asha Rao',
      customer_phone: '9812345678',
      idempotency_key: randomUUID(),
      ...body,
    },
  });
}

/** Event types recorded for a hold, in order. */
export async function eventTypes(db: Knex, holdId: string): Promise<string[]> {
  return db('events')
    .where({ hold_id: holdId })
    .orderBy('occurred_at')
    .orderBy('event_type')
    .pluck('event_type');
}

/** Makes a hold past its expiry without running its job (as if the job were late). */
export async function makeOverdue(db: Knex, holdId: string): Promise<void> {
  const past = db.raw("now() - interval '1 second'");
  await db('holds').where({ id: holdId }).update({ hold_expiry_at: past });
  await db('reservations').where({ hold_id: holdId }).update({ expires_at: past });
}
