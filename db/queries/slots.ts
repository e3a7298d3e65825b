/** The slot grid (`venue_slots()` in SQL): the one definition availability and holds both read. */
import type { Knex } from '../knex.ts';

/** One slot of a resource's grid on a date. */
export interface SlotRow {
  resource_id: string;
  slot_start: Date;
  slot_end: Date;
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
  const { rows } = await db.raw<{ rows: SlotRow[] }>('select * from venue_slots(?, ?::date, ?)', [
    venueId,
    date,
    resourceId ?? null,
  ]);
  return rows;
}

/** The grid slots of a resource inside [start, end), on the venue-local date of `start`. */
export async function covering(
  db: Knex,
  venueId: string,
  resourceId: string,
  start: Date,
  end: Date,
): Promise<SlotRow[]> {
  const { rows } = await db.raw<{ rows: SlotRow[] }>(
    `select s.* from venues v
       cross join lateral venue_slots(v.id, (?::timestamptz at time zone v.timezone)::date, ?) s
      where v.id = ? and s.slot_start >= ? and s.slot_end <= ?
      order by s.slot_start`,
    [start, resourceId, venueId, start, end],
  );
  return rows;
}
