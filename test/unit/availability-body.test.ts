/**
 * The availability body written as bytes (api/presenters/availability.ts) is exactly what
 * JSON.stringify makes of the response built as objects, ordered by start time and then resource:
 * the same keys in the same order, the same ids and times, whether a slot's head was just made or
 * kept from an earlier request, and with a resource's slots listed in any order; the change feed's
 * cursor last.
 */
import test from 'ava';
import { randomUUID } from 'node:crypto';
import { presentAvailability, presentGrid } from '../../api/presenters/availability.ts';
import type { ResourceDay, SlotTimes } from '../../db/queries/slots.ts';
import { slotId } from '../../db/rules/slot-id.ts';

function asObjects(venueId: string, date: string, days: ResourceDay[], changesCursor: string): string {
  const slots = days.flatMap((day) =>
    day.times.starts.map((start, i) => ({
      slot_id: slotId(day.times.resourceId, start),
      resource_id: day.times.resourceId,
      slot_start: new Date(start).toISOString(),
      slot_end: new Date(day.times.ends[i]!).toISOString(),
      price_rupees: day.prices[i]!,
      is_available: day.available[i]!,
    })),
  );
  slots.sort(
    (a, b) => a.slot_start.localeCompare(b.slot_start) || a.resource_id.localeCompare(b.resource_id),
  );
  return JSON.stringify({ venue_id: venueId, date, slots, changes_cursor: changesCursor });
}

/** A resource's slots of `minutes` from `first`, listed in a shuffled order. */
function timesOf(resourceId: string, first: number, minutes: number, count: number): SlotTimes {
  const order = Array.from({ length: count }, (_, i) => i).sort(() => Math.random() - 0.5);
  return {
    resourceId,
    starts: order.map((i) => first + i * minutes * 60_000),
    ends: order.map((i) => first + (i + 1) * minutes * 60_000),
  };
}

test('the bytes are JSON.stringify of the objects, by start then resource, first time and kept', (t) => {
  const venueId = randomUUID();
  const first = Date.UTC(2026, 10, 24, 0, 30);
  const times = [
    timesOf(randomUUID(), first, 30, 40),
    timesOf(randomUUID(), first, 60, 20),
    timesOf(randomUUID(), first + 15 * 60_000, 45, 25),
  ].sort((a, b) => (a.resourceId < b.resourceId ? -1 : 1)); // as the database lists them
  const days = (round: number): ResourceDay[] =>
    times.map((day) => ({
      times: day,
      prices: day.starts.map((_, i) => [500, 0, 1_999_999, 750][(i + round) % 4]! + round),
      available: day.starts.map((_, i) => (i * 7 + round) % 3 !== 0),
    }));
  for (const round of [0, 1, 2]) {
    t.is(
      presentAvailability(
        presentGrid(venueId, '2026-11-24', days(round)),
        1296n * BigInt(round),
      ).bytes.toString('utf8'),
      asObjects(venueId, '2026-11-24', days(round), (1296 * round).toString(36)),
      `round ${round}`,
    );
  }
  t.is(
    presentAvailability(presentGrid(venueId, '2026-11-25', []), 0n).bytes.toString('utf8'),
    asObjects(venueId, '2026-11-25', [], '0'),
  );
});
