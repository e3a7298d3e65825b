/**
 * The event recorder: every change of a hold or booking records its event in the transaction that
 * makes the change, so an event exists if and only if its change committed. The details of each
 * event are defined once, in SQL (`hold_event_details`, `booking_event_details`), so a statement
 * that changes a row can also record its event from its RETURNING row, in the same round trip.
 * Each recorded event is published: its `webhook.fanout` job is enqueued in the same transaction.
 * (A waitlist promotion records its event in the statement that promotes, in
 * `db/queries/waitlist-entries.ts`, and publishes it the same way.)
 */
import type { PgBoss } from 'pg-boss';
import { enqueue } from '../jobs/enqueue.ts';
import { WEBHOOK_FANOUT } from '../jobs/kinds.ts';
import type { Knex } from '../postgres/knex.ts';
import type { EventType } from '../queries/events.ts';

export type HoldEventType = Extract<EventType, 'hold_created' | 'hold_cancelled' | 'hold_expired'>;
export type BookingEventType = Extract<
  EventType,
  'booking_created' | 'booking_cancelled' | 'booking_refunded'
>;

const COLUMNS = 'event_type, venue_id, partner_id, hold_id, booking_id, slot_id, details';

/**
 * SQL inserting one hold event per row of `source` (a table or CTE of `holds` rows); its single
 * binding is the event type. For use inside a statement that changes the hold.
 */
export function holdEventSql(source: string): string {
  return `insert into events (${COLUMNS})
          select ?::text, h.venue_id, h.partner_id, h.id, null, h.slot_id, hold_event_details(h) from ${source} h`;
}

/** SQL inserting one booking event per row of `source` (`bookings` rows); binding: the event type. */
export function bookingEventSql(source: string): string {
  return `insert into events (${COLUMNS})
          select ?::text, b.venue_id, b.partner_id, b.hold_id, b.id, b.slot_id, booking_event_details(b) from ${source} b`;
}

/** Enqueues the webhook fan-out of recorded events, in the transaction that recorded them. */
export async function publishEvents(boss: PgBoss, trx: Knex.Transaction, eventIds: string[]): Promise<void> {
  for (const eventId of eventIds) await enqueue(boss, trx, WEBHOOK_FANOUT, { event_id: eventId });
}

/** Records and publishes a hold event for the hold as it now is in this transaction; its id. */
export async function recordHoldEvent(
  trx: Knex.Transaction,
  boss: PgBoss,
  type: HoldEventType,
  holdId: string,
): Promise<string> {
  const { rows } = await trx.raw<{ rows: { id: string }[] }>(
    `with h as (select * from holds where id = ?) ${holdEventSql('h')} returning id`,
    [holdId, type],
  );
  return publishOne(boss, trx, rows);
}

/** Records and publishes a booking event for the booking as it now is in this transaction; its id. */
export async function recordBookingEvent(
  trx: Knex.Transaction,
  boss: PgBoss,
  type: BookingEventType,
  bookingId: string,
): Promise<string> {
  const { rows } = await trx.raw<{ rows: { id: string }[] }>(
    `with b as (select * from bookings where id = ?) ${bookingEventSql('b')} returning id`,
    [bookingId, type],
  );
  return publishOne(boss, trx, rows);
}

async function publishOne(boss: PgBoss, trx: Knex.Transaction, rows: { id: string }[]): Promise<string> {
  const id = rows[0]!.id;
  await publishEvents(boss, trx, [id]);
  return id;
}
