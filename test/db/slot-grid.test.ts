/**
 * `venue_slots()` gathers what blocks a resource once (a multirange of its units' live reservations,
 * another of its blackouts) and tests each slot against them. Here it is held to the plain
 * definition, slot by slot, over random reservations and blackouts that start and end off the grid,
 * span several slots, touch without overlapping, lie on a whole or on its parts, are overdue or
 * released; and a narrowed window (as a hold asks for) is the same slots as the whole day.
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
    const [hold] = await db('holds')
      .insert({
        partner_id: w.partnerId,
        venue_id: w.venueId,
        resource_id: w.court,
        slot_id: randomUUID(),
        slot_start: new Date(opening),
        slot_end: new Date(opening + 60 * MINUTE),
        hold_expiry_at: new Date(),
        price_rupees: 1,
      })
      .returning('id');
    const rows = [];
    for (const unit of [w.court, w.halfA, w.halfB, short]) {
      for (const [from, to] of intervals(opening, 12)) {
        const kind = Math.random();
        rows.push({
          hold_id: hold.id,
          unit_id: unit,
          resource_id: unit,
          during: `[${from.toISOString()},${to.toISOString()})`,
          expires_at:
            kind < 0.2 ? new Date(Date.now() - MINUTE) : kind < 0.5 ? new Date(Date.now() + 3_600_000) : null,
        });
      }
      // Released reservations may overlap anything: they block nothing.
      for (const [from, to] of intervals(opening, 3)) {
        rows.push({
          hold_id: hold.id,
          unit_id: unit,
          resource_id: unit,
          during: `[${from.toISOString()},${to.toISOString()})`,
          active: false,
        });
      }
    }
    await db('reservations').insert(rows);
    for (const [from, to] of intervals(opening, 4)) {
      const units = [null, [w.halfA], [w.court, w.halfB], [short]][Math.floor(Math.random() * 4)];
      await db('blackouts').insert({
        venue_id: w.venueId,
        unit_ids: units,
        during: `[${from.toISOString()},${to.toISOString()})`,
      });
    }

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
      [w.venueId, date, w.venueId],
    );
    t.deepEqual(wrong, [], `round ${round}`);
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
  }
});
