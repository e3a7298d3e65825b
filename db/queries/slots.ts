/** The slot grid (`venue_slots()` in SQL): the one definition availability and holds both read. */
import type { Knex } from '../postgres/knex.ts';

/** One slot of a resource's grid on a date; times are ISO 8601 UTC text, as the API writes them. */
export interface SlotRow {
  resource_id: string;
  slot_id: string;
  slot_start: string;
  slot_end: string;
  price_rupees: number;
  /** The booking rules allow a hold: venue active, after now plus lead time, no blackout. */
  bookable: boolean;
  /** A live reservation of one of its units overlaps it. */
  taken: boolean;
}

/** The grid of a venue (or one of its resources) on a venue-local date. */
export async function forDate(
  db: Knex,
  venueId: string,
  date: string,
  resourceId?: string,
): Promise<SlotRow[]> {
  // Formatted in SQL: a day's grid is hundreds of rows, and parsing then re-printing every
  // timestamp in JavaScript cost more than the query.
  const { rows } = await db.raw<{ rows: SlotRow[] }>(
    `select resource_id, slot_id, iso_utc(slot_start) as slot_start, iso_utc(slot_end) as slot_end, price_rupees,
            bookable, taken
       from venue_slots(?, ?::date, ?)`,
    [venueId, date, resourceId ?? null],
  );
  return rows;
}
