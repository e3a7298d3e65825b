import test from 'ava';
import { randomUUID } from 'node:crypto';
import type { Knex } from '../../db/postgres/knex.ts';
import * as availabilityChanges from '../../db/queries/availability-changes.ts';
import { insertBlackout } from '../../db/queries/booking-rules.ts';
import * as resources from '../../db/queries/resources.ts';
import * as venues from '../../db/queries/venues.ts';
import { bookSlot, gridSlots, holdSlot, localDate, makeBookingWorld } from '../helpers/booking.ts';
import { useTestDatabase } from '../helpers/database.ts';
import { makePartner, makeResource } from '../helpers/factories.ts';
import { call, useTestServer } from '../helpers/http.ts';
import { assertDocumented } from '../helpers/openapi.ts';

const database = useTestDatabase(test);
const server = useTestServer(test, database);

/** What `venue:status` records beside its change: every date of the venue may show otherwise. */
const venueChanged = (db: Knex, venueId: string) =>
  availabilityChanges.recordRange(db, {
    venueId,
    resourceId: null,
    from: null,
    to: null,
    reason: 'venue_status',
  });

const availability = (key: string, query: string) =>
  call(server(), 'GET', `/api/v1/slots/availability?${query}`, { key });

test('the grid: every resource from opening time in steps of its duration, in UTC, with stable slot ids', async (t) => {
  const { db } = database();
  const w = await makeBookingWorld(db);
  const date = await localDate(db, w.venueId, 1);
  const res = await availability(w.apiKey, `venue_id=${w.venueId}&date=${date}`);
  t.is(res.status, 200);
  assertDocumented(t, 'GET /slots/availability', res);
  t.is(res.body.venue_id, w.venueId);
  t.is(res.body.date, date);
  const court = res.body.slots.filter((s: { resource_id: string }) => s.resource_id === w.court);
  t.is(court.length, 16, '06:00 to 22:00 in 60-minute slots');
  // Asia/Kolkata is UTC+05:30: 06:00 local is 00:30 UTC on the same date.
  t.is(court[0].slot_start, `${date}T00:30:00.000Z`);
  t.is(court[0].slot_end, `${date}T01:30:00.000Z`);
  t.is(court.at(-1).slot_end, `${date}T16:30:00.000Z`);
  const { rows } = await db.raw('select slot_id(?, ?) as id', [w.court, court[0].slot_start]);
  t.is(court[0].slot_id, rows[0].id, 'the slot id is a function of resource and start');
  t.regex(court[0].slot_id, /^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-8[0-9a-f]{3}-[0-9a-f]{12}$/);
  t.is(res.body.slots.length, 16 * 4);
  const again = await availability(w.apiKey, `venue_id=${w.venueId}&date=${date}`);
  t.deepEqual(again.body, res.body, 'slot ids are stable');
  t.true(res.body.slots.every((s: { is_available: boolean }) => s.is_available));
});

test('an id sent in upper case is the same id: the answer writes it in lower case, as every other does', async (t) => {
  const { db } = database();
  const w = await makeBookingWorld(db);
  const date = await localDate(db, w.venueId, 1);
  const lower = await availability(w.apiKey, `venue_id=${w.venueId}&date=${date}`);
  const upper = await availability(
    w.apiKey,
    `venue_id=${w.venueId.toUpperCase()}&date=${date}&resource_id=${w.court.toUpperCase()}`,
  );
  t.is(upper.status, 200, upper.text);
  t.is(upper.body.venue_id, w.venueId);
  t.deepEqual(
    upper.body.slots,
    lower.body.slots.filter((s: { resource_id: string }) => s.resource_id === w.court),
  );
});

test('resource_id narrows the grid; a resource of another venue is a 400', async (t) => {
  const { db } = database();
  const w = await makeBookingWorld(db);
  const date = await localDate(db, w.venueId, 1);
  const one = await availability(w.apiKey, `venue_id=${w.venueId}&date=${date}&resource_id=${w.full}`);
  t.true(one.body.slots.every((s: { resource_id: string }) => s.resource_id === w.full));
  t.is(one.body.slots[0].price_rupees, 1800);
  const foreign = await availability(
    w.apiKey,
    `venue_id=${w.venueId}&date=${date}&resource_id=${await makeResource(db)}`,
  );
  t.is(foreign.status, 400);
  t.is(foreign.body.details[0].field, 'resource_id');
  t.is((await availability(w.apiKey, `venue_id=${w.venueId}&date=${date}&resource_id=nope`)).status, 400);
});

test('closed days, past dates and dates beyond the booking window give an empty grid', async (t) => {
  const { db } = database();
  const w = await makeBookingWorld(db, { maxAdvanceDays: 3 });
  const closed = await makeResource(db, { venueId: w.venueId, closedOn: [1, 2, 3, 4, 5, 6, 7] });
  const tomorrow = await localDate(db, w.venueId, 1);
  t.deepEqual(
    (await availability(w.apiKey, `venue_id=${w.venueId}&date=${tomorrow}&resource_id=${closed}`)).body.slots,
    [],
  );
  for (const days of [-1, 4, 400]) {
    const res = await availability(
      w.apiKey,
      `venue_id=${w.venueId}&date=${await localDate(db, w.venueId, days)}`,
    );
    t.is(res.status, 200);
    t.deepEqual(res.body.slots, [], `${days} days ahead`);
  }
  t.true(
    (await availability(w.apiKey, `venue_id=${w.venueId}&date=${await localDate(db, w.venueId, 3)}`)).body
      .slots.length > 0,
  );
});

for (const taking of ['hold', 'booking'] as const) {
  test(`taken windows: a ${taking} on a half takes the whole; a ${taking} on the whole takes both halves`, async (t) => {
    const { db } = database();
    const w = await makeBookingWorld(db);
    const date = await localDate(db, w.venueId, 1);
    // A running hold is read from holds, a booking from booked_time (per unit and UTC day).
    const take = taking === 'hold' ? holdSlot : bookSlot;
    await take(server(), w, { resource: w.halfA, index: 0 });
    await take(server(), w, { resource: w.full, index: 2 });
    const res = await availability(w.apiKey, `venue_id=${w.venueId}&date=${date}`);
    const state = (resource: string, i: number) =>
      res.body.slots.filter((s: { resource_id: string }) => s.resource_id === resource)[i]
        .is_available as boolean;
    t.deepEqual(
      [state(w.halfA, 0), state(w.halfB, 0), state(w.full, 0), state(w.court, 0)],
      [false, true, false, true],
    );
    t.deepEqual([state(w.halfA, 2), state(w.halfB, 2), state(w.full, 2)], [false, false, false]);
    t.deepEqual([state(w.halfA, 1), state(w.halfB, 1), state(w.full, 1)], [true, true, true]);
  });
}

test('blackouts, lead time and started slots show unavailable; a paused venue shows all unavailable', async (t) => {
  const { db } = database();
  const w = await makeBookingWorld(db);
  const date = await localDate(db, w.venueId, 1);
  const slots = await gridSlots(db, w.venueId, w.court);
  await insertBlackout(db, {
    venueId: w.venueId,
    resourceId: w.halfA,
    unitIds: await resources.unitsOf(db, w.halfA),
    from: slots[1]!.slot_start,
    to: slots[2]!.slot_end,
    reason: 'relaying turf',
  });
  let res = await availability(w.apiKey, `venue_id=${w.venueId}&date=${date}`);
  const state = (resource: string, i: number) =>
    res.body.slots.filter((s: { resource_id: string }) => s.resource_id === resource)[i]
      .is_available as boolean;
  t.deepEqual(
    [state(w.halfA, 1), state(w.halfA, 2), state(w.full, 1), state(w.halfB, 1), state(w.court, 1)],
    [false, false, false, true, true],
  );

  const today = await localDate(db, w.venueId, 0);
  const todays = await availability(w.apiKey, `venue_id=${w.venueId}&date=${today}&resource_id=${w.court}`);
  for (const slot of todays.body.slots) {
    if (Date.parse(slot.slot_start) <= Date.now())
      t.false(slot.is_available, `${slot.slot_start} has started`);
  }
  // Changed here in SQL, then recorded as an operator's command records its change: what a web
  // process keeps of the grid is judged by the change log (api/use-cases/kept-availability.ts).
  await db('venues')
    .where({ id: w.venueId })
    .update({ min_lead_minutes: 3 * 24 * 60 });
  await venueChanged(db, w.venueId);
  res = await availability(w.apiKey, `venue_id=${w.venueId}&date=${date}`);
  t.true(
    res.body.slots.every((s: { is_available: boolean }) => !s.is_available),
    'all inside the lead time',
  );
  await db('venues').where({ id: w.venueId }).update({ min_lead_minutes: 0 });
  await venues.setStatus(db, w.venueId, 'paused');
  await venueChanged(db, w.venueId);
  res = await availability(w.apiKey, `venue_id=${w.venueId}&date=${date}`);
  t.true(res.body.slots.length > 0);
  t.true(
    res.body.slots.every((s: { is_available: boolean }) => !s.is_available),
    'paused',
  );
});

test('403 VENUE_NOT_AUTHORIZED for a venue not granted, archived or missing; 400 for bad queries', async (t) => {
  const { db } = database();
  const w = await makeBookingWorld(db);
  const date = await localDate(db, w.venueId, 1);
  const stranger = await makePartner(db);
  const refused = await availability(stranger.apiKey, `venue_id=${w.venueId}&date=${date}`);
  t.is(refused.status, 403);
  t.is(refused.body.error, 'VENUE_NOT_AUTHORIZED');
  assertDocumented(t, 'GET /slots/availability', refused);
  t.is((await availability(w.apiKey, `venue_id=${randomUUID()}&date=${date}`)).status, 403);
  for (const query of [
    '',
    `venue_id=${w.venueId}`,
    `date=${date}`,
    `venue_id=x&date=${date}`,
    `venue_id=${w.venueId}&date=2026-13-01`,
    `venue_id=${w.venueId}&date=tomorrow`,
    `venue_id=${w.venueId}&venue_id=${w.venueId}&date=${date}`,
  ]) {
    const res = await availability(w.apiKey, query);
    t.is(res.status, 400, query);
    t.is(res.body.error, 'VALIDATION_ERROR');
    t.true(res.body.details.every((d: { in: string }) => d.in === 'query'));
  }
  await venues.setStatus(db, w.venueId, 'archived');
  t.is((await availability(w.apiKey, `venue_id=${w.venueId}&date=${date}`)).status, 403);
});
