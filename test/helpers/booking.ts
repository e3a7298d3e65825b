/**
 * Helpers for booking tests: a granted venue with resources, the grid slots of a future day, short
 * calls for the booking endpoints (`hold`, `confirm`: any answer, for tests that inspect it), and
 * setup steps that must succeed (`holdSlot`, `bookSlot`, `releaseHold`: they throw otherwise).
 */
import { randomUUID } from 'node:crypto';
import type { Knex } from '../../db/postgres/knex.ts';
import { holdExpire } from '../../workers/hold-expire.ts';
import type { TestDatabase } from './database.ts';
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

/** A slot of `venue_slots()`, the grid holds are checked against. */
export interface GridSlot {
  resource_id: string;
  slot_start: Date;
  slot_end: Date;
  price_rupees: number;
  bookable: boolean;
  taken: boolean;
}

/** The grid slots of one resource `daysAhead` days from today. */
export async function gridSlots(
  db: Knex,
  venueId: string,
  resourceId: string,
  daysAhead = 1,
): Promise<GridSlot[]> {
  const { rows } = await db.raw<{ rows: GridSlot[] }>(
    'select * from venue_slots(?, ?::date, ?) order by slot_start',
    [venueId, await localDate(db, venueId, daysAhead), resourceId],
  );
  return rows;
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

/** Which grid slot to hold, and how: slot `index` of `resource` `daysAhead` days from today. */
export interface SlotChoice {
  /** The resource to hold; the world's court unless given. */
  resource?: string | undefined;
  /** The slot's position in the resource's grid of that day; 0 unless given. */
  index?: number | undefined;
  /** Days from today, in the venue's time zone; 1 (tomorrow) unless given. */
  daysAhead?: number | undefined;
  /** The hold's length; 60 unless given. */
  minutes?: number | undefined;
  /** More hold fields (`customer_phone`, `idempotency_key`…), sent as given. */
  body?: Record<string, unknown> | undefined;
}

/** The world fields a hold needs. */
type Holder = Pick<BookingWorld, 'apiKey' | 'venueId' | 'court'>;

/** A hold placed by {@link holdSlot}. */
export interface HeldSlot {
  holdId: string;
  slotId: string;
  slotStart: Date;
  /** The 201 answer. */
  response: CallResult;
}

/**
 * Holds one grid slot through the API, as setup: throws with the answer unless it is 201. The grid
 * is read on the server's own pool.
 */
export async function holdSlot(
  server: TestServer,
  world: Holder,
  choice: SlotChoice = {},
): Promise<HeldSlot> {
  const { resource = world.court, index = 0, daysAhead = 1, minutes = 60, body } = choice;
  const slot = (await gridSlots(server.db, world.venueId, resource, daysAhead))[index];
  if (!slot) throw new Error(`no slot ${index} of ${resource} ${daysAhead} days ahead`);
  const response = await hold(server, world.apiKey, {
    venue_id: world.venueId,
    resource_id: resource,
    slot_start: slot.slot_start,
    slot_duration_minutes: minutes,
    ...body,
  });
  if (response.status !== 201) throw new Error(`hold: ${response.status} ${response.text}`);
  return {
    holdId: response.body.hold_id as string,
    slotId: response.body.slot_id as string,
    slotStart: slot.slot_start,
    response,
  };
}

/** A booking made by {@link bookSlot}, with both answers. */
export interface BookedSlot {
  holdId: string;
  bookingId: string;
  slotStart: Date;
  hold: CallResult;
  confirm: CallResult;
}

/**
 * Holds one grid slot and confirms it with `confirm`'s extra fields, as setup: throws with the
 * answer unless both are 201.
 */
export async function bookSlot(
  server: TestServer,
  world: Holder,
  choice: SlotChoice & { confirm?: Record<string, unknown> | undefined } = {},
): Promise<BookedSlot> {
  const held = await holdSlot(server, world, choice);
  const confirmed = await confirm(server, world.apiKey, { hold_id: held.holdId, ...choice.confirm });
  if (confirmed.status !== 201) throw new Error(`confirm: ${confirmed.status} ${confirmed.text}`);
  return {
    holdId: held.holdId,
    bookingId: confirmed.body.booking_id as string,
    slotStart: held.slotStart,
    hold: held.response,
    confirm: confirmed,
  };
}

/** Releases a hold (POST /partner/holds/{holdId}/cancel), as setup: throws unless it is 200. */
export async function releaseHold(
  server: TestServer,
  world: Pick<BookingWorld, 'apiKey'>,
  holdId: string,
): Promise<CallResult> {
  const res = await call(server, 'POST', `/api/v1/partner/holds/${holdId}/cancel`, {
    key: world.apiKey,
    body: { idempotency_key: randomUUID() },
  });
  if (res.status !== 200) throw new Error(`release: ${res.status} ${res.text}`);
  return res;
}

/** Event types recorded for a hold, in order. */
export async function eventTypes(db: Knex, holdId: string): Promise<string[]> {
  return db('events').where({ hold_id: holdId }).orderBy(['tx', 'seq']).pluck('event_type');
}

/** Makes a hold past its expiry, by a second unless told, without running its job (as if the job were late). */
export async function makeOverdue(db: Knex, holdId: string, secondsAgo = 1): Promise<void> {
  const past = db.raw('now() - make_interval(secs => ?)', [secondsAgo]);
  await db('holds').where({ id: holdId }).update({ hold_expiry_at: past });
  await db('reservations').where({ hold_id: holdId }).update({ expires_at: past });
}

/** Expires a hold now: past its expiry (`makeOverdue`), then its hold.expire job's handler run once. */
export async function expireNow(database: TestDatabase, holdId: string): Promise<void> {
  const { db, boss, config, log } = database;
  await makeOverdue(db, holdId);
  await holdExpire.handle({ hold_id: holdId }, { db, boss, config, log }, { id: randomUUID() } as never);
}
