/**
 * Series racing for real, through two apps with two pools (two web processes) on one database: one
 * winner per contested week, no half-held series, and "this and following" against the booking's own
 * cancel changing each booking once.
 */
import test from 'ava';
import { randomUUID } from 'node:crypto';
import { createDb } from '../../db/postgres/knex.ts';
import * as grants from '../../db/queries/venue-grants.ts';
import { hold, makeBookingWorld } from '../helpers/booking.ts';
import { useTestDatabase } from '../helpers/database.ts';
import { makePartner } from '../helpers/factories.ts';
import { confirmGroup, createGroup } from '../helpers/hold-groups.ts';
import { call, startApp, type TestServer } from '../helpers/http.ts';
import { changeSeries, createSeries, readSeries, weeksFrom } from '../helpers/series.ts';

const database = useTestDatabase(test);
const servers: TestServer[] = [];
let secondPool: ReturnType<typeof createDb> | undefined;
test.before(async () => {
  const db = await database.ready();
  secondPool = createDb(db.url, { poolMax: 10 });
  servers.push(await startApp(db), await startApp(db, { db: secondPool }));
});
test.after.always(async () => {
  for (const s of servers) await s.close();
  await secondPool?.destroy();
});
const web = (i: number) => servers[i % 2]!;

async function partnersOf(venueId: string, count: number) {
  const keys: string[] = [];
  for (let i = 0; i < count; i++) {
    const p = await makePartner(database().db, { rateLimit: 100_000 });
    await grants.grant(database().db, p.partnerId, venueId);
    keys.push(p.apiKey);
  }
  return keys;
}

/** Active reservations per unit that overlap another on the same unit: never any. */
async function overlappingReservations(): Promise<number> {
  const { rows } = await database().db.raw<{ rows: { n: number }[] }>(
    `select count(*)::int as n from reservations a join reservations b
        on a.unit_id = b.unit_id and a.id < b.id and a.during && b.during
     where a.active and b.active and (a.expires_at is null or a.expires_at > now())
       and (b.expires_at is null or b.expires_at > now())`,
  );
  return rows[0]!.n;
}

test('two partners creating overlapping series at once: reject gives one whole series and nothing to the other; skip splits the weeks', async (t) => {
  const { db } = database();
  for (const [round, start] of ['18:00', '19:00', '20:00', '21:00'].entries()) {
    const w = await makeBookingWorld(db, { maxAdvanceDays: 90 });
    const [a, b] = await partnersOf(w.venueId, 2);
    const dates = await weeksFrom(db, w.venueId, 2, [0, 2]);
    // A holds weeks 0–5, B weeks 2–7: weeks 2–5 contested.
    const pattern = (first: string) => ({
      venue_id: w.venueId,
      resource_id: w.court,
      first_date: first,
      start_time: start,
      slot_duration_minutes: 60,
      count: 6,
    });
    const skip = round % 2 === 1;
    const extra = skip ? { on_conflict: 'skip', min_occurrences: 2 } : {};
    const [ra, rb] = await Promise.all([
      createSeries(web(round), a!, { ...pattern(dates[0]!), ...extra }),
      createSeries(web(round + 1), b!, { ...pattern(dates[1]!), ...extra }),
    ]);
    t.false([ra, rb].some((r) => r.status >= 500));
    if (!skip) {
      t.deepEqual([ra.status, rb.status].sort(), [201, 409], `${ra.text} ${rb.text}`);
      const loser = ra.status === 409 ? ra : rb;
      t.deepEqual(
        loser.body.details.map((d: { field: string; reason: string }) => [d.field, d.reason]),
        ra.status === 409
          ? [2, 3, 4, 5].map((k) => [`occurrences.${k}`, 'TAKEN'])
          : [0, 1, 2, 3].map((k) => [`occurrences.${k}`, 'TAKEN']),
      );
    } else {
      t.deepEqual([ra.status, rb.status], [201, 201], `${ra.text} ${rb.text}`);
      // Every contested week held by exactly one of them.
      const heldA = ra.body.occurrences.map((o: { status: string }) => o.status === 'HELD');
      const heldB = rb.body.occurrences.map((o: { status: string }) => o.status === 'HELD');
      for (let week = 2; week <= 5; week++) {
        t.true(heldA[week] !== heldB[week - 2], `week ${week} held once`);
      }
    }
    const groups = await db('hold_groups').where({ venue_id: w.venueId });
    for (const g of groups) {
      const holds = await db('holds').where({ hold_group_id: g.id });
      const series = await db('series').where({ hold_group_id: g.id }).first();
      const held = await db('series_occurrences').where({ series_id: series.id, created_status: 'HELD' });
      t.is(holds.length, held.length, 'a series holds what it says, no more, no less');
    }
  }
  t.is(await overlappingReservations(), 0);
});

test('a series against single holds and groups on the same weeks: the winners never overlap', async (t) => {
  const { db } = database();
  const w = await makeBookingWorld(db, { maxAdvanceDays: 90 });
  const keys = await partnersOf(w.venueId, 9);
  const dates = await weeksFrom(db, w.venueId, 2, [0, 1, 2, 3]);
  const at = (date: string) => `${date}T13:30:00.000Z`;
  const results = await Promise.all([
    createSeries(web(0), keys[0]!, {
      venue_id: w.venueId,
      resource_id: w.court,
      first_date: dates[0],
      start_time: '19:00',
      slot_duration_minutes: 60,
      count: 4,
      on_conflict: 'skip',
    }),
    ...dates.map((date, i) =>
      hold(web(i + 1), keys[i + 1]!, { venue_id: w.venueId, resource_id: w.court, slot_start: at(date) }),
    ),
    ...[0, 2].map((k, i) =>
      createGroup(web(i), keys[5 + i]!, {
        venue_id: w.venueId,
        items: [
          { resource_id: w.court, slot_start: at(dates[k]!), slot_duration_minutes: 60 },
          { resource_id: w.court, slot_start: at(dates[k + 1]!), slot_duration_minutes: 60 },
        ],
      }),
    ),
  ]);
  t.false(
    results.some((r) => r.status >= 500),
    results.map((r) => r.status).join(),
  );
  for (const r of results) t.true([201, 409].includes(r.status), r.text);
  t.is(await overlappingReservations(), 0);
  // Each week is held by exactly one of them.
  const live = await db('reservations').where({ unit_id: w.court, active: true }).count({ n: '*' });
  t.is(Number(live[0]!.n), 4);
});

test('"this and following" against the booking\'s own cancel, at once: each booking cancelled once, one event each', async (t) => {
  const { db } = database();
  const w = await makeBookingWorld(db, { maxAdvanceDays: 90 });
  const [first] = await weeksFrom(db, w.venueId, 2, [0]);
  for (let round = 0; round < 5; round++) {
    const created = await createSeries(web(0), w.apiKey, {
      venue_id: w.venueId,
      resource_id: w.court,
      first_date: first,
      start_time: `${String(8 + round).padStart(2, '0')}:00`,
      slot_duration_minutes: 60,
      count: 4,
    });
    t.is(created.status, 201, created.text);
    t.is((await confirmGroup(web(1), w.apiKey, created.body.hold_group_id)).status, 201);
    const series = (await readSeries(web(0), w.apiKey, created.body.series_id)).body;
    const bookingId = series.occurrences[2].booking_id as string;
    const [whole, one] = await Promise.all([
      changeSeries(web(round), w.apiKey, series.series_id, 'cancel', { from_occurrence_index: 1 }),
      call(web(round + 1), 'POST', `/api/v1/bookings/${bookingId}/cancel`, {
        key: w.apiKey,
        body: { idempotency_key: randomUUID() },
      }),
    ]);
    t.is(whole.status, 200, whole.text);
    t.true([200, 409].includes(one.status), one.text);
    t.deepEqual(whole.body.changed, one.status === 200 ? [1, 3] : [1, 2, 3]);
    const ids = series.occurrences.slice(1).map((o: { booking_id: string }) => o.booking_id);
    const events = await db('events').where({ event_type: 'booking_cancelled' }).whereIn('booking_id', ids);
    t.deepEqual(events.map((e) => e.booking_id).sort(), [...ids].sort(), 'one cancel event per booking');
  }
});
