/**
 * The slot grid on days the clocks change, in zones that change at different local hours and by
 * different amounts: America/New_York (02:00, one hour), Europe/London (01:00, one hour) and
 * Australia/Lord_Howe (02:00, half an hour). On the next spring-forward and fall-back day of each,
 * found from the zone database rather than written down (so the test never goes stale), a resource
 * open 00:00–06:00 with 60-minute slots must step in absolute time from its opening instant:
 * every slot exactly 60 minutes, consecutive, with distinct ids, as many as fit between the
 * opening and closing instants; every available slot can be held, a hold may span the change,
 * price rules match the slot's real local start, and a freed window promotes the waitlist with
 * a slot id of that day's grid. Local times are computed with Intl, independently of the SQL.
 */
import test, { type ExecutionContext } from 'ava';
import { randomUUID } from 'node:crypto';
import { insertPriceRule } from '../../db/queries/booking-rules.ts';
import { waitlistPromote } from '../../workers/waitlist-promote.ts';
import { hold } from '../helpers/booking.ts';
import { useTestDatabase } from '../helpers/database.ts';
import { makePartner, makeResource, makeVenue } from '../helpers/factories.ts';
import { call, useTestServer } from '../helpers/http.ts';
import { assertDocumented } from '../helpers/openapi.ts';
import { join } from '../helpers/waitlist.ts';

const database = useTestDatabase(test);
const server = useTestServer(test, database);

const ZONES = ['America/New_York', 'Europe/London', 'Australia/Lord_Howe'];
const BASE_PRICE = 500;
const RULE_PRICE = 900;

interface Slot {
  slot_id: string;
  slot_start: string;
  slot_end: string;
  price_rupees: number;
  is_available: boolean;
}

/** The next day (venue-local) whose length is not 24 hours, shorter or longer as asked. */
async function nextTransition(zone: string, kind: 'shorter' | 'longer'): Promise<string> {
  const { rows } = await database().db.raw<{ rows: { day: string }[] }>(
    `select to_char(d, 'YYYY-MM-DD') as day
       from generate_series((now() at time zone ?)::date + 2, (now() at time zone ?)::date + 400, '1 day') d
      where ((d::date + 1)::timestamp at time zone ?) - (d::date::timestamp at time zone ?)
            ${kind === 'shorter' ? '<' : '>'} interval '24 hours'
      order by d limit 1`,
    [zone, zone, zone, zone],
  );
  if (!rows[0]) throw new Error(`no ${kind} day within 400 days in ${zone}`);
  return rows[0].day;
}

/** The instant a venue-local wall time names, as PostgreSQL reads it (the grid's definition). */
async function instant(zone: string, day: string, time: string): Promise<number> {
  const { rows } = await database().db.raw<{ rows: { t: Date }[] }>(
    'select (?::date + ?::time) at time zone ? as t',
    [day, time, zone],
  );
  return rows[0]!.t.getTime();
}

/** HH:MM of an instant on the wall clocks of `zone`. */
function localTime(zone: string, iso: string): string {
  return new Intl.DateTimeFormat('en-GB', {
    timeZone: zone,
    hour: '2-digit',
    minute: '2-digit',
    hourCycle: 'h23',
  }).format(new Date(iso));
}

async function world(zone: string) {
  const { db } = database();
  const { partnerId, apiKey } = await makePartner(db, { rateLimit: 100_000 });
  const venueId = await makeVenue(db, { timezone: zone, maxAdvanceDays: 400, grantTo: [partnerId] });
  const resource = () =>
    makeResource(db, {
      venueId,
      opensAt: '00:00',
      closesAt: '06:00',
      durationMinutes: 60,
      priceRupees: BASE_PRICE,
    });
  return { apiKey, venueId, courtA: await resource(), courtB: await resource() };
}

async function availability(
  t: ExecutionContext,
  apiKey: string,
  venueId: string,
  resourceId: string,
  date: string,
) {
  const res = await call(
    server(),
    'GET',
    `/api/v1/slots/availability?venue_id=${venueId}&date=${date}&resource_id=${resourceId}`,
    { key: apiKey },
  );
  assertDocumented(t, 'GET /slots/availability', res);
  return { status: res.status, slots: (res.body?.slots ?? []) as Slot[] };
}

for (const zone of ZONES) {
  for (const kind of ['shorter', 'longer'] as const) {
    test(`${zone}, the next ${kind} day: the grid steps in absolute time and every slot can be held`, async (t) => {
      const { db } = database();
      const day = await nextTransition(zone, kind);
      const w = await world(zone);
      await insertPriceRule(db, {
        resourceId: w.courtA,
        priceRupees: RULE_PRICE,
        days: null,
        fromTime: '03:00',
        toTime: '04:00',
        onDate: day,
      });

      const { status, slots } = await availability(t, w.apiKey, w.venueId, w.courtA, day);
      t.is(status, 200);
      const opens = await instant(zone, day, '00:00');
      const closes = await instant(zone, day, '06:00');
      const hour = 60 * 60_000;
      t.is(slots.length, Math.floor((closes - opens) / hour), `${day}: slots fitting the open hours`);
      t.not(closes - opens, 6 * hour, `${day} is a day the clocks change`);
      t.is(new Set(slots.map((s) => s.slot_id)).size, slots.length, 'distinct slot ids');
      slots.forEach((slot, i) => {
        const start = Date.parse(slot.slot_start);
        t.is(Date.parse(slot.slot_end) - start, hour, `${slot.slot_start} lasts 60 minutes`);
        t.is(start, opens + i * hour, `${slot.slot_start} steps from the opening instant`);
        const local = localTime(zone, slot.slot_start);
        const ruled = local >= '03:00' && local < '04:00';
        t.is(slot.price_rupees, ruled ? RULE_PRICE : BASE_PRICE, `price of the ${local} slot`);
        t.true(slot.is_available);
      });

      // Every available slot can be held, one by one.
      for (const slot of slots) {
        const res = await hold(server(), w.apiKey, {
          venue_id: w.venueId,
          resource_id: w.courtA,
          slot_start: slot.slot_start,
        });
        t.is(res.status, 201, `${slot.slot_start}: ${res.text}`);
        t.is(res.body.slot_id, slot.slot_id);
      }
      const after = await availability(t, w.apiKey, w.venueId, w.courtA, day);
      t.true(
        after.slots.every((s) => !s.is_available),
        'all held now',
      );

      // A hold may span the change: two slots from the second one on, priced as both.
      const [, second, third] = (await availability(t, w.apiKey, w.venueId, w.courtB, day)).slots;
      const spanning = await hold(server(), w.apiKey, {
        venue_id: w.venueId,
        resource_id: w.courtB,
        slot_start: second!.slot_start,
        slot_duration_minutes: 120,
      });
      t.is(spanning.status, 201, spanning.text);
      t.is(spanning.body.price_rupees, second!.price_rupees + third!.price_rupees);

      // Releasing it promotes the waitlist of that day to a slot of that day's grid.
      const entry = await join(server(), w.apiKey, {
        venue_id: w.venueId,
        resource_id: w.courtB,
        slot_date: day,
      });
      t.is(entry.status, 201, entry.text);
      const released = await call(server(), 'POST', `/api/v1/partner/holds/${spanning.body.hold_id}/cancel`, {
        key: w.apiKey,
        body: { idempotency_key: randomUUID() },
      });
      t.is(released.status, 200, released.text);
      const freedBy = await db('events')
        .where({ hold_id: spanning.body.hold_id, event_type: 'hold_cancelled' })
        .first('id');
      await waitlistPromote.handle(
        { event_id: freedBy.id },
        { db, boss: database().boss, config: database().config, log: database().log },
        { id: randomUUID() } as never,
      );
      const promoted = await db('waitlist_entries').where({ id: entry.body.entry.id }).first();
      t.is(promoted.status, 'promoted');
      t.is(promoted.slot_id, second!.slot_id);
      t.is(promoted.slot_date, day);
    });
  }
}
