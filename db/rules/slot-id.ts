/**
 * A slot's id: a name-based UUID of its resource and start, so the same slot has the same id in
 * every answer and no table stores the grid. This is `slot_id()` in SQL (which names a hold's slot)
 * written in JavaScript for availability, where md5 per slot in the database was a third of the
 * grid's cost; test/db/slot-id.test.ts holds the two to the same answers.
 */
import { hash } from 'node:crypto';

/**
 * md5 of `booking-slot:<resource id>/<start in epoch milliseconds>`, shown as a UUID with version 5
 * and variant 8 written over the 13th and 17th hex digits (as `slot_id()` overlays them).
 * `resourceId` in PostgreSQL's lower-case text form; `startMs` a whole number of milliseconds.
 */
export function slotId(resourceId: string, startMs: number): string {
  const hex = hash('md5', `booking-slot:${resourceId}/${startMs}`, 'hex');
  return (
    `${hex.slice(0, 8)}-${hex.slice(8, 12)}-5${hex.slice(13, 16)}-8${hex.slice(17, 20)}-` + hex.slice(20)
  );
}
