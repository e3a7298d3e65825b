/**
 * Series on the venue's clock, across the next real changes of daylight saving (within a year of
 * today) in zones that change both ways and by half an hour: Europe/London, America/New_York,
 * Australia/Lord_Howe. Expected wall clocks, offsets and instants come from Intl (Node's ICU), not
 * from PostgreSQL: each occurrence keeps its venue-local wall-clock start while its UTC instant
 * moves by the change; a start the clocks skip has no window (NOT_ON_GRID) for that date only; a
 * start the clocks repeat takes its first instance.
 */
import test from 'ava';
import { makePartner, makeResource, makeVenue } from '../helpers/factories.ts';
import { useTestDatabase } from '../helpers/database.ts';
import { useTestServer } from '../helpers/http.ts';
import * as venues from '../../db/queries/venues.ts';
import { localDate } from '../helpers/booking.ts';
import {
  addDays,
  createSeries,
  gridOf,
  offsetAt,
  offsetChanges,
  previewSeries,
  wallClock,
} from '../helpers/series.ts';

const database = useTestDatabase(test);
const server = useTestServer(test, database);

const ZONES = ['Europe/London', 'America/New_York', 'Australia/Lord_Howe'];
/** Half-hour slots all day, so that every wall-clock time on the half hour is a grid start. */
const STEP = 30;

async function venueIn(zone: string) {
  const { db } = database();
  const partner = await makePartner(db, { rateLimit: 100_000 });
  const venueId = await makeVenue(db, { timezone: zone, maxAdvanceDays: 21, grantTo: [partner.partnerId] });
  await venues.setSeriesWindow(db, venueId, 730);
  const resourceId = await makeResource(db, {
    venueId,
    durationMinutes: STEP,
    opensAt: '00:00',
    closesAt: '23:30',
    priceRupees: 300,
  });
  return { ...partner, venueId, resourceId, today: await localDate(db, venueId, 0) };
}

/** The wall-clock times of a date that its grid skips, and those it repeats (first instance kept). */
function clockChanges(date: string, zone: string) {
  const grid = gridOf(date, zone, STEP);
  const times = grid.map((instant) => wallClock(instant, zone).slice(11));
  const all = Array.from(
    { length: 47 },
    (_, i) => `${String(Math.floor(i / 2)).padStart(2, '0')}:${i % 2 ? '30' : '00'}`,
  );
  return {
    skipped: all.filter((time) => !times.includes(time)),
    repeated: [...new Set(times.filter((time, i) => times.indexOf(time) !== i))],
    firstAt: (time: string) => grid[times.indexOf(time)]!,
  };
}

for (const zone of ZONES) {
  test(`${zone}: every transition of the next year keeps the wall clock, skips what the clocks skip, takes the first of a repeat`, async (t) => {
    const v = await venueIn(zone);
    const transitions = offsetChanges(zone, v.today, 365).filter((date) => date > addDays(v.today, 1));
    t.true(transitions.length >= 2, `${zone} changes its clocks twice a year: ${transitions.join()}`);
    for (const date of transitions) {
      // Occurrences the week before, on and after the change (the week before only when still ahead).
      const before = addDays(date, -7);
      const first = before > v.today ? before : date;
      const count = first === before ? 3 : 2;
      const onChange = first === before ? 1 : 0;
      const { skipped, repeated, firstAt } = clockChanges(date, zone);
      t.true(skipped.length + repeated.length > 0, `${date} moves the clock in ${zone}`);

      // A time that exists on every date: the same wall clock, the instant moving by the change.
      const pattern = {
        venue_id: v.venueId,
        resource_id: v.resourceId,
        first_date: first,
        start_time: '12:00',
        slot_duration_minutes: 60,
        count,
      };
      const noon = await previewSeries(server(), v.apiKey, pattern);
      t.is(noon.status, 200, noon.text);
      for (const o of noon.body.occurrences) {
        t.is(o.status, 'AVAILABLE', `${zone} ${o.local_date}: ${o.reason}`);
        const start = new Date(o.slot_start);
        t.is(
          wallClock(start, zone),
          `${o.local_date} 12:00`,
          `${zone} ${o.local_date}: noon on the venue's clock`,
        );
        t.is(o.utc_offset, offsetAt(start, zone));
        t.is(Date.parse(o.slot_end) - start.getTime(), 3_600_000);
      }
      if (onChange === 1) {
        // From the week before to the week after, the offset changes, and so the UTC step.
        const offsets = noon.body.occurrences.map((o: { utc_offset: string }) => o.utc_offset);
        t.not(offsets[0], offsets[2], `${zone} ${date}: the offset changes across the series`);
        const step =
          Date.parse(noon.body.occurrences[1].slot_start) - Date.parse(noon.body.occurrences[0].slot_start);
        t.not(step, 7 * 86_400_000, 'never 7 × 86,400 seconds across the change');
      }

      // Create agrees with the preview, instant for instant.
      const created = await createSeries(server(), v.apiKey, pattern);
      t.is(created.status, 201, created.text);
      t.deepEqual(
        created.body.occurrences.map((o: { slot_start: string; utc_offset: string }) => [
          o.slot_start,
          o.utc_offset,
        ]),
        noon.body.occurrences.map((o: { slot_start: string; utc_offset: string }) => [
          o.slot_start,
          o.utc_offset,
        ]),
      );

      // A time the clocks skip: no window on that date only.
      for (const time of skipped.slice(0, 1)) {
        const res = await previewSeries(server(), v.apiKey, { ...pattern, start_time: time });
        t.deepEqual(
          res.body.occurrences.map((o: { reason: string | null; slot_start: string | null }) => [
            o.reason,
            o.slot_start === null,
          ]),
          res.body.occurrences.map((_: unknown, k: number) =>
            k === onChange ? ['NOT_ON_GRID', true] : [null, false],
          ),
          `${zone} ${date} ${time} is skipped`,
        );
        const refused = await createSeries(server(), v.apiKey, { ...pattern, start_time: time });
        t.is(refused.status, 400);
        t.like(refused.body.details[0], {
          field: `occurrences.${onChange}`,
          reason: 'NOT_ON_GRID',
          local_date: date,
        });
      }
      // A time the clocks repeat: the first instance, with the offset before the change.
      for (const time of repeated.slice(0, 1)) {
        const res = await previewSeries(server(), v.apiKey, { ...pattern, start_time: time });
        const o = res.body.occurrences[onChange];
        t.is(o.status, 'AVAILABLE');
        t.is(o.slot_start, firstAt(time).toISOString(), `${zone} ${date} ${time}: the first one`);
        t.is(o.utc_offset, offsetAt(firstAt(time), zone));
      }
    }
  });
}
