/**
 * Freeing a window: the step shared by every change that ends a hold's or booking's claim on its
 * slots (hold released or expired, booking cancelled or refunded while BOOKED). Its reservations
 * stop blocking, and the waitlist promotion of the window is enqueued in the same transaction,
 * named by the event that freed it, so each freed window is offered to the waitlist exactly once.
 */
import type { PgBoss } from 'pg-boss';
import { enqueue } from '../jobs/enqueue.ts';
import { WAITLIST_PROMOTE } from '../jobs/kinds.ts';
import type { Knex } from '../postgres/knex.ts';
import * as reservations from '../queries/reservations.ts';

/**
 * Frees the windows of several holds (or of their bookings) at once — a hold group's release or
 * expiry — with one promotion job for all of them: `freedBy` are the events that freed them. One
 * window's job names its event as `event_id`, the payload every release of the worker reads.
 */
export async function freeWindows(
  trx: Knex.Transaction,
  boss: PgBoss,
  holdIds: readonly string[],
  freedBy: readonly string[],
): Promise<void> {
  if (holdIds.length === 0) return;
  await reservations.release(trx, holdIds);
  await enqueue(
    boss,
    trx,
    WAITLIST_PROMOTE,
    freedBy.length === 1 ? { event_id: freedBy[0]! } : { event_ids: [...freedBy] },
  );
}

/** Frees the window of `holdId` (a hold, or the hold of a booking); `freedBy` is the event's id. */
export function freeWindow(
  trx: Knex.Transaction,
  boss: PgBoss,
  holdId: string,
  freedBy: string,
): Promise<void> {
  return freeWindows(trx, boss, [holdId], [freedBy]);
}
