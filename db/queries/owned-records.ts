/**
 * Rows a partner acts on by id (holds, bookings, hold groups, series). Each is locked for a change
 * only when it is the caller's (`lockForChange` in its own module): a partner naming another's id
 * must not queue behind, or hold up, the owner's writes. What was not locked is then told apart
 * here, without a lock: another partner's (403) or none at all (404).
 */
import type { Knex } from '../postgres/knex.ts';

export type OwnedTable = 'holds' | 'bookings' | 'hold_groups' | 'series';

/** Whether a row with this id exists, whoever owns it; read without a lock. */
export async function exists(db: Knex, table: OwnedTable, id: string): Promise<boolean> {
  return (await db(table).where({ id }).first('id')) !== undefined;
}
