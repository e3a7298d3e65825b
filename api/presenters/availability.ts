/**
 * The body of GET /slots/availability, written as JSON bytes. A venue's day is two thousand slots
 * (~440 KB): built as objects, stringified and encoded as UTF-8 on every request, it cost the web
 * process more CPU than the database spent on the grid. What a slot is (its id, resource and
 * times) follows from its resource's times alone, which the query keeps as one object while they
 * stay the same (`SlotTimes`), so those bytes are kept with it; only each slot's price and
 * availability are chosen per request. The bytes are exactly what JSON.stringify makes of the
 * response as objects (test/unit/availability-body.test.ts).
 */
import type { ResourceDay, SlotTimes } from '../../db/queries/slots.ts';
import { slotId } from '../../db/rules/slot-id.ts';
import { cursorOf } from '../feed/cursor.ts';
import { JsonBytes } from '../route.ts';
import type { AvailabilityResponse } from '../schemas/availability.ts';

/**
 * Per resource day, each slot's `{"slot_id":…,"resource_id":…,"slot_start":…,"slot_end":…,
 * "price_rupees":`, position by position; dropped with the SlotTimes they were made from.
 */
const heads = new WeakMap<SlotTimes, Buffer[]>();
/** `<price>,"is_available":<boolean>}` by price and availability: a venue has a handful of prices. */
const tails = new Map<number, Buffer>();
const MAX_TAILS = 10_000;

const COMMA = Buffer.from(',');
const CURSOR_KEY = Buffer.from('],"changes_cursor":');

interface Placed {
  start: number;
  head: Buffer;
  tail: Buffer;
}

/**
 * The body's bytes up to its `changes_cursor`, whose value follows (`presentAvailability`): a grid
 * as sent, and as kept to be sent again (api/use-cases/kept-availability.ts).
 */
export function presentGrid(venueId: string, date: string, days: readonly ResourceDay[]): Buffer {
  const slots: Placed[] = [];
  for (const day of days) {
    const dayHeads = headsOf(day.times);
    for (let i = 0; i < dayHeads.length; i++) {
      slots.push({
        start: day.times.starts[i]!,
        head: dayHeads[i]!,
        tail: tailOf(day.prices[i]!, day.available[i]!),
      });
    }
  }
  // By start time; days come by resource id and the sort is stable, so slots that start together
  // stay in resource order.
  slots.sort((a, b) => a.start - b.start);
  const chunks: Buffer[] = [
    Buffer.from(`{"venue_id":${JSON.stringify(venueId)},"date":${JSON.stringify(date)},"slots":[`),
  ];
  for (let i = 0; i < slots.length; i++) {
    if (i > 0) chunks.push(COMMA);
    chunks.push(slots[i]!.head, slots[i]!.tail);
  }
  chunks.push(CURSOR_KEY);
  return Buffer.concat(chunks);
}

/** The body: a grid's bytes (`presentGrid`), then the cursor of the change log's position it is exact at. */
export function presentAvailability(grid: Buffer, changesPosition: bigint): JsonBytes<AvailabilityResponse> {
  const cursor = Buffer.from(`${JSON.stringify(cursorOf({ position: changesPosition, k: null }))}}`);
  return new JsonBytes(Buffer.concat([grid, cursor], grid.length + cursor.length));
}

function headsOf(times: SlotTimes): Buffer[] {
  let made = heads.get(times);
  if (made === undefined) {
    const resource = JSON.stringify(times.resourceId);
    made = times.starts.map((start, i) =>
      Buffer.from(
        `{"slot_id":${JSON.stringify(slotId(times.resourceId, start))},"resource_id":${resource}` +
          `,"slot_start":${JSON.stringify(new Date(start).toISOString())}` +
          `,"slot_end":${JSON.stringify(new Date(times.ends[i]!).toISOString())},"price_rupees":`,
      ),
    );
    heads.set(times, made);
  }
  return made;
}

function tailOf(price: number, available: boolean): Buffer {
  const key = price * 2 + (available ? 1 : 0);
  let tail = tails.get(key);
  if (tail === undefined) {
    tail = Buffer.from(`${JSON.stringify(price)},"is_available":${available}}`);
    if (tails.size >= MAX_TAILS) tails.clear();
    tails.set(key, tail);
  }
  return tail;
}
