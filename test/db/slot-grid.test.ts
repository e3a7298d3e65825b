/**
 * `venue_slots()` gathers what blocks a resource once (a multirange of its units' live reservations,
 * another of its blackouts) and tests each slot against them. Here it is held to the plain
 * definition, slot by slot, over random reservations and blackouts that start and end off the grid,
 * span several slots, touch without overlapping, lie on a whole or on its parts, are overdue or
 * released, and again after some are confirmed, released or deleted (booked time is kept per unit and
 * day by triggers, `booked_time`); and a narrowed window (as a hold asks for) is the same slots as the
 * whole day. Then `booked_time` itself: across midnight, and under concurrent bookings of one unit-day.
 */
import test from 'ava';
import { randomUUID } from 'node:crypto';
import { gridSlots, localDate, makeBookingWorld } from '../helpers/booking.ts';
import { useTestDatabase } from '../helpers/database.ts';
import { makeResource } from '../helpers/factories.ts';

const database = useTestDatabase(test);

const MINUTE = 60_000;

/** Random intervals after `from`, apart from each other (or touching): what one unit can hold. */
function intervals(from: number, count: number): [Date, Date][] {
  const out: [Date, Date][] = [];
  let at = from;
  for (let i = 0; i < count; i++) {
    const start = at + Math.floor(Math.random() * 4) * 25 * MINUTE;
    const end = start + (5 + Math.floor(Math.random() * 24) * 10) * MINUTE;
    out.push([new Date(start), new Date(end)]);
    at = end;
  }
  return out;
}

test('taken and bookable are, slot by slot, what the plain definition says', async (t) => {
  const { db } = database();
  for (let round = 0; round < 5; round++) {
    const w = await makeBookingWorld(db);
    const short = await makeResource(db, { venueId: w.venueId, durationMinutes: 15 });
    const date = await localDate(db, w.venueId, 2);
    const opening = (await gridSlots(db, w.venueId, w.court, 2))[0]!.slot_start.getTime() - 8 * 60 * MINUTE;
    // Each reservation with its own hold, in the state that goes with it: running (and maybe
    // overdue), confirmed, or released.
    const rows: Reservation[] = [];
    for (const unit of [w.court, w.halfA, w.halfB, short]) {
      for (const [from, to] of intervals(opening, 12)) {
        const kind = Math.random();
        const expiresAt =
          kind < 0.2 ? new Date(Date.now() - MINUTE) : kind < 0.5 ? new Date(Date.now() + 3_600_000) : null;
        rows.push({ unit, from, to, expiresAt, active: true });
      }
      // Released reservations may overlap anything: they block nothing.
      for (const [from, to] of intervals(opening, 3))
        rows.push({ unit, from, to, expiresAt: null, active: false });
    }
    const holdIds = await insertReservations(db, w, rows);
    for (const [from, to] of intervals(opening, 4)) {
      const units = [null, [w.halfA], [w.court, w.halfB], [short]][Math.floor(Math.random() * 4)];
      await db('blackouts').insert({
        venue_id: w.venueId,
        unit_ids: units,
        during: `[${from.toISOString()},${to.toISOString()})`,
      });
    }

    await assertPlain(t, db, w.venueId, date, `round ${round}`);
    const { rows: counts } = await db.raw(
      'select count(*) filter (where taken) as taken, count(*) filter (where not bookable) as dark, count(*) as n from venue_slots(?, ?::date)',
      [w.venueId, date],
    );
    t.true(counts[0].taken > 0 && counts[0].taken < counts[0].n, 'some slots taken, some free');

    const { rows: narrowed } = await db.raw(
      `select count(*) as n from venue_slots(?, ?::date) whole
        where whole.resource_id = ?
          and (select row(s.*) from venue_slots(?, ?::date, whole.resource_id, whole.slot_start, whole.slot_end) s)
              is distinct from row(whole.*)`,
      [w.venueId, date, w.full, w.venueId, date],
    );
    t.is(Number(narrowed[0].n), 0, 'one slot asked for is that slot of the day');

    // What changes booked time after the fact: a hold confirmed, a booking released or deleted.
    const { rows: ids } = await db.raw(
      'select id, hold_id, active, expires_at from reservations where hold_id = any (?)',
      [holdIds],
    );
    for (const row of ids) {
      const dice = Math.random();
      if (dice < 0.25 && row.active && row.expires_at) {
        await db('reservations').where({ id: row.id }).update({ expires_at: null });
        await db('holds').where({ id: row.hold_id }).update({ status: 'CONFIRMED' });
      } else if (dice < 0.4 && row.active && !row.expires_at) {
        await db('reservations').where({ id: row.id }).update({ active: false });
      } else if (dice < 0.5) {
        await db('reservations').where({ id: row.id }).delete();
      }
    }
    await assertPlain(t, db, w.venueId, date, `round ${round}, after changes`);
    t.deepEqual(await bookedTimeDrift(db), [], `round ${round}: booked_time is the union of the bookings`);
  }
});

test('booked time across UTC midnight lands in both days, and leaves them when released', async (t) => {
  const { db } = database();
  const w = await makeBookingWorld(db);
  const [hold] = await db('holds')
    .insert({
      partner_id: w.partnerId,
      venue_id: w.venueId,
      resource_id: w.court,
      slot_id: randomUUID(),
      slot_start: new Date('2031-03-04T23:00:00Z'),
      slot_end: new Date('2031-03-05T01:30:00Z'),
      hold_expiry_at: new Date(),
      price_rupees: 1,
    })
    .returning('id');
  const [row] = await db('reservations')
    .insert({
      hold_id: hold.id,
      unit_id: w.court,
      resource_id: w.court,
      during: '[2031-03-04T23:00:00Z,2031-03-05T01:30:00Z)',
      expires_at: new Date(Date.now() + 60_000),
    })
    .returning('id');
  const days = () =>
    db.raw(
      `select utc_day::text as day, booked::text as booked from booked_time where unit_id = ? and not isempty(booked)
        order by utc_day`,
      [w.court],
    );
  t.deepEqual((await days()).rows, [], 'a running hold is not booked time');
  await db('reservations').where({ id: row.id }).update({ expires_at: null });
  t.deepEqual(
    (await days()).rows.map((r: { day: string }) => r.day),
    ['2031-03-04', '2031-03-05'],
  );
  t.deepEqual(await bookedTimeDrift(db), []);
  await db('reservations').where({ id: row.id }).update({ active: false });
  t.deepEqual((await days()).rows, [], 'released: nothing left');
});

test('concurrent bookings of one unit on one day all land in its booked time', async (t) => {
  const { db } = database();
  const w = await makeBookingWorld(db);
  const base = Date.parse('2031-06-01T06:00:00Z');
  const holds = await db('holds')
    .insert(
      Array.from({ length: 24 }, (_, i) => ({
        partner_id: w.partnerId,
        venue_id: w.venueId,
        resource_id: w.court,
        slot_id: randomUUID(),
        slot_start: new Date(base + i * 30 * MINUTE),
        slot_end: new Date(base + (i + 1) * 30 * MINUTE),
        hold_expiry_at: new Date(),
        price_rupees: 1,
      })),
    )
    .returning(['id', 'slot_start', 'slot_end']);
  await db('reservations').insert(
    holds.map((h: { id: string; slot_start: Date; slot_end: Date }) => ({
      hold_id: h.id,
      unit_id: w.court,
      resource_id: w.court,
      during: `[${h.slot_start.toISOString()},${h.slot_end.toISOString()})`,
      expires_at: new Date(Date.now() + 60_000),
    })),
  );
  // Each confirms its hold and stays open a moment, so the others queue on the day's row.
  await Promise.all(
    holds.map((h: { id: string }) =>
      db.transaction(async (trx) => {
        await trx('reservations').where({ hold_id: h.id }).update({ expires_at: null });
        await trx.raw('select pg_sleep(0.02)');
      }),
    ),
  );
  const { rows } = await db.raw(
    `select booked = tstzmultirange(tstzrange('2031-06-01T06:00:00Z', '2031-06-01T18:00:00Z')) as whole
       from booked_time where unit_id = ?`,
    [w.court],
  );
  t.deepEqual(rows, [{ whole: true }], 'one row, all 24 half-hours');
  t.deepEqual(await bookedTimeDrift(db), []);
});

type Db = ReturnType<typeof database>['db'];

type Reservation = { unit: string; from: Date; to: Date; expiresAt: Date | null; active: boolean };

/**
 * Writes each reservation with a hold of its own, as the service would leave them: the hold's window
 * is the reservation's, a running one is ACTIVE until its expiry, a booked one CONFIRMED, a released
 * one CANCELLED. Returns the holds' ids.
 */
async function insertReservations(
  db: Db,
  w: { partnerId: string; venueId: string },
  rows: Reservation[],
): Promise<string[]> {
  const holds = await db('holds')
    .insert(
      rows.map((r) => ({
        partner_id: w.partnerId,
        venue_id: w.venueId,
        resource_id: r.unit,
        slot_id: randomUUID(),
        slot_start: r.from,
        slot_end: r.to,
        status: !r.active ? 'CANCELLED' : r.expiresAt ? 'ACTIVE' : 'CONFIRMED',
        hold_expiry_at: r.expiresAt ?? new Date(),
        price_rupees: 1,
      })),
    )
    .returning('id');
  await db('reservations').insert(
    rows.map((r, i) => ({
      hold_id: holds[i].id,
      unit_id: r.unit,
      resource_id: r.unit,
      during: `[${r.from.toISOString()},${r.to.toISOString()})`,
      expires_at: r.expiresAt,
      active: r.active,
    })),
  );
  return holds.map((h: { id: string }) => h.id);
}

/** Every slot of the venue's day is taken and dark exactly when the plain definition says. */
async function assertPlain(
  t: { deepEqual: (a: unknown, b: unknown, m?: string) => void },
  db: Db,
  venueId: string,
  date: string,
  message: string,
): Promise<void> {
  const { rows: wrong } = await db.raw(
    `select s.*, plain.taken as plain_taken, plain.dark as plain_dark
         from venue_slots(?, ?::date) s,
         lateral (select
           exists (select from reservations rv
                    where rv.unit_id = any (resource_units(s.resource_id)) and reservation_is_live(rv)
                      and rv.during && tstzrange(s.slot_start, s.slot_end)) as taken,
           exists (select from blackouts b
                    where b.venue_id = ? and b.during && tstzrange(s.slot_start, s.slot_end)
                      and (b.unit_ids is null or b.unit_ids && resource_units(s.resource_id))) as dark) plain
        where s.taken <> plain.taken or s.bookable <> not plain.dark`,
    [venueId, date, venueId],
  );
  t.deepEqual(wrong, [], message);
}

/** Units whose booked_time is not the union of their active reservations without an expiry. */
async function bookedTimeDrift(db: Db): Promise<unknown[]> {
  const { rows } = await db.raw(
    `select unit_id from
       (select unit_id, range_agg(booked) as m from booked_time group by unit_id) kept
       full join (select unit_id, range_agg(during) as m from reservations
                   where active and expires_at is null group by unit_id) plain using (unit_id)
      where coalesce(kept.m, '{}') <> coalesce(plain.m, '{}')`,
  );
  return rows;
}
