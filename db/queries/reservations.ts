/**
 * Queries on `reservations`: the rows, one per physical unit, that the exclusion constraint keeps
 * from overlapping. The constraint compares every active reservation; of those, a live one
 * (`reservation_is_live()` in SQL) blocks its window and an overdue one
 * (`reservation_is_overdue()`: past its hold's expiry) blocks nobody once its hold is expired.
 */
import type { Knex } from '../postgres/knex.ts';

/** The name of the exclusion constraint, for telling its violations apart. */
export const NO_OVERLAP_CONSTRAINT = 'reservations_no_overlap';

/** A reservation overlapping a window: whose hold, which resource, and whether it is overdue. */
export interface Overlap {
  hold_id: string;
  resource_id: string;
  /** Its hold is past expiry: it blocks nobody, and its hold is to be expired. */
  overdue: boolean;
}

/** The active reservations on these units that overlap [start, end), one row per hold. */
export async function overlapping(trx: Knex, unitIds: string[], start: Date, end: Date): Promise<Overlap[]> {
  const { rows } = await trx.raw<{ rows: Overlap[] }>(
    `select distinct r.hold_id, r.resource_id, reservation_is_overdue(r) as overdue
       from reservations r
      where r.active and r.unit_id = any (?::uuid[]) and r.during && tstzrange(?, ?)`,
    [unitIds, start, end],
  );
  return rows;
}

/**
 * Frees the windows of holds (or of their bookings): their reservations stop blocking, one by one in
 * unit order (release_reservations(): booked time is written in one order, so writers never deadlock).
 */
export async function release(trx: Knex, holdIds: readonly string[]): Promise<void> {
  await trx.raw('select release_reservations(?::uuid[])', [[...holdIds]]);
}
