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
