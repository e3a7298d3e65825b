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

/** Frees the window of `holdId` (a hold, or the hold of a booking); `freedBy` is the event's id. */
export async function freeWindow(
  trx: Knex.Transaction,
  boss: PgBoss,
  holdId: string,
  freedBy: string,
): Promise<void> {
  await reservations.release(trx, holdId);
  await enqueue(boss, trx, WAITLIST_PROMOTE, { event_id: freedBy });
}
