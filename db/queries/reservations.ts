/**
 * Queries on `reservations`: the rows, one per physical unit, that the exclusion constraint keeps
 * from overlapping. A live reservation is active and not past its hold's expiry.
 */
import type { Knex } from '../knex.ts';

/** The name of the exclusion constraint, for telling its violations apart. */
export const NO_OVERLAP_CONSTRAINT = 'reservations_no_overlap';

/**
 * Locks the units' resource rows in a fixed order, so transactions that touch overlapping units
 * queue up instead of deadlocking inside the exclusion check (DESIGN.md: without it, a 64-client
 * fight for one window lost half its holds to 1-second deadlock timeouts).
 */
export async function lockUnits(trx: Knex, unitIds: string[]): Promise<void> {
  await trx('resources').select('id').whereIn('id', unitIds).orderBy('id').forNoKeyUpdate();
}

/** Ids of ACTIVE holds whose reservations overlap the window on these units but are past expiry. */
export async function staleHoldIds(trx: Knex, unitIds: string[], start: Date, end: Date): Promise<string[]> {
  const rows = await trx('reservations')
    .distinct('hold_id')
    .where('active', true)
    .whereIn('unit_id', unitIds)
    .whereRaw('during && tstzrange(?, ?)', [start, end])
    .where('expires_at', '<=', trx.fn.now());
  return rows.map((r: { hold_id: string }) => r.hold_id);
}

/** The resources (whole or part) whose live reservations overlap the window on these units. */
export async function conflictingResourceIds(
  trx: Knex,
  unitIds: string[],
  start: Date,
  end: Date,
): Promise<string[]> {
  const rows = await trx('reservations')
    .distinct('resource_id')
    .where('active', true)
    .whereIn('unit_id', unitIds)
    .whereRaw('during && tstzrange(?, ?)', [start, end])
    .where((q) => void q.whereNull('expires_at').orWhere('expires_at', '>', trx.fn.now()));
  return rows.map((r: { resource_id: string }) => r.resource_id);
}

/** Reserves every unit for the hold's window until its expiry. */
export async function insertForHold(
  trx: Knex,
  hold: { id: string; resource_id: string; slot_start: Date; slot_end: Date; hold_expiry_at: Date },
  unitIds: string[],
): Promise<void> {
  await trx('reservations').insert(
    unitIds.map((unitId) => ({
      hold_id: hold.id,
      unit_id: unitId,
      resource_id: hold.resource_id,
      during: trx.raw('tstzrange(?, ?)', [hold.slot_start, hold.slot_end]),
      expires_at: hold.hold_expiry_at,
    })),
  );
}

/** The hold became a booking: its reservations no longer expire. */
export async function keepForBooking(trx: Knex, holdId: string): Promise<void> {
  await trx('reservations').where({ hold_id: holdId }).update({ expires_at: null });
}

/** Frees the window of a hold or booking. */
export async function release(trx: Knex, holdId: string): Promise<void> {
  await trx('reservations').where({ hold_id: holdId, active: true }).update({ active: false });
}

/** How many live reservations a hold still has (all of its units while it is intact). */
export async function countLive(trx: Knex, holdId: string): Promise<number> {
  const [row] = await trx('reservations').where({ hold_id: holdId, active: true }).count({ n: '*' });
  return Number(row?.n ?? 0);
}
