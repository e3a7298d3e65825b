/**
 * Recording events. Every change of a hold, a booking or a waitlist entry records its event in the
 * transaction that makes the change, so an event exists if and only if its change committed; and
 * an event is published (its deliveries made, each with its first attempt due) by the statement
 * that records it. There is one way to do both, from SQL and TypeScript alike: `record_event()` and
 * `record_events()` (`db/functions/record_event.sql`: one event, or a set in one insert and one
 * publication) and their kin — `record_hold_event(s)()`, `record_booking_event(s)()`,
 * `record_waitlist_event()` — which the hold and confirm functions call themselves, and which these
 * helpers call for the changes made from TypeScript. What each event says is defined there too
 * (`hold_event_details()`, `booking_event_details()`). test/db/event-recorder.test.ts checks that
 * nothing else writes to `events`, and test/helpers/database.ts, after every test file, that every
 * event has the deliveries its subscribers were owed.
 */
import { traceSetting } from '../platform/tracing.ts';
import type { Knex } from '../postgres/knex.ts';
import type { BookingEventType, HoldEventType } from '../queries/events.ts';

/** Records and publishes the event of a hold as it now is in `trx`, with the trace in scope; its id. */
export function recordHoldEvent(trx: Knex.Transaction, type: HoldEventType, holdId: string): Promise<string> {
  return recordOne(trx, 'select record_hold_event(h, ?, ?) as id from holds h where h.id = ?', type, holdId);
}

/**
 * Records and publishes the events of several holds at once (a group's release or expiry), in one
 * statement, in the order given; their ids in that order.
 */
export async function recordHoldEvents(
  trx: Knex.Transaction,
  type: HoldEventType,
  holdIds: readonly string[],
): Promise<string[]> {
  if (holdIds.length === 0) return [];
  const { rows } = await trx.raw<{ rows: { ids: string[] }[] }>(
    'select record_hold_events(?, ?::uuid[], ?) as ids',
    [type, [...holdIds], traceSetting()],
  );
  return rows[0]!.ids;
}

/** As recordHoldEvent, for a booking. */
export function recordBookingEvent(
  trx: Knex.Transaction,
  type: BookingEventType,
  bookingId: string,
): Promise<string> {
  return recordOne(
    trx,
    'select record_booking_event(b, ?, ?) as id from bookings b where b.id = ?',
    type,
    bookingId,
  );
}

/** As recordHoldEvents, for bookings (a series' cancel or refund). */
export async function recordBookingEvents(
  trx: Knex.Transaction,
  type: BookingEventType,
  bookingIds: readonly string[],
): Promise<string[]> {
  if (bookingIds.length === 0) return [];
  const { rows } = await trx.raw<{ rows: { ids: string[] }[] }>(
    'select record_booking_events(?, ?::uuid[], ?) as ids',
    [type, [...bookingIds], traceSetting()],
  );
  return rows[0]!.ids;
}

async function recordOne(trx: Knex.Transaction, sql: string, type: string, id: string): Promise<string> {
  const { rows } = await trx.raw<{ rows: { id: string }[] }>(sql, [type, traceSetting(), id]);
  if (!rows[0]) throw new Error(`no row ${id} to record an event of`);
  return rows[0].id;
}
