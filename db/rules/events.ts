/**
 * The event recorder, the one way to record an event: every change of a hold, a booking or a
 * waitlist entry records its event in the transaction that makes the change (so an event exists if
 * and only if its change committed), and every event recorded is published — its deliveries made,
 * each with its first attempt's job, in that same transaction (`publish_event()`) — before the
 * recorder lets go.
 *
 * An event is recorded only through an `EventLog`, and a log exists only inside `recordEvents()`.
 * A hold's or a booking's event is recorded and published by one statement, through the SQL
 * functions the hold and confirm functions use too (`record_hold_event()`,
 * `record_booking_event()`: `log.holdEvent()`, `log.bookingEvent()`). A statement that changes
 * waitlist rows records their events in the same round trip: it asks the log for the SQL
 * (`log.waitlistPromotedEvents(source)`, one event per row of `source`, returning the events'
 * ids) and reports the ids it got back (`log.recorded(ids)`), which `recordEvents()` publishes
 * when the work it wraps is done; a statement that took the SQL and reported nothing is a bug
 * `recordEvents()` refuses, rather than an event nobody hears of. What each event says is defined
 * once, in SQL: `hold_event_details(h)`, `booking_event_details(b)`, and the promotion's details
 * below. (test/helpers/database.ts checks after every test file that every event has the
 * deliveries its subscribers were owed, each with its job.)
 */
import type { Knex } from '../postgres/knex.ts';
import { traceSetting } from '../platform/tracing.ts';
import { publish } from '../queries/webhook-deliveries.ts';
import type { BookingEventType, EventLog, HoldEventType } from '../queries/events.ts';

export type { EventLog } from '../queries/events.ts';

const COLUMNS = 'event_type, venue_id, partner_id, hold_id, booking_id, slot_id, details';

class TransactionEventLog implements EventLog {
  readonly ids: string[] = [];
  private unreported = 0;

  waitlistPromotedEvents(source: string): string {
    this.unreported++;
    return `insert into events (${COLUMNS})
            select 'waitlist_promoted', w.venue_id, w.partner_id, null, null, w.slot_id,
                   jsonb_build_object('waitlist_entry_id', w.id, 'resource_id', w.resource_id,
                     'slot_date', w.slot_date, 'slot_start', iso_utc(w.window_start),
                     'slot_end', iso_utc(w.window_end), 'price_rupees', w.window_price, 'status', w.status,
                     'promoted_at', iso_utc(w.promoted_at), 'expires_at', iso_utc(w.expires_at))
              from ${source} w returning id`;
  }

  recorded(ids: readonly (string | null | undefined)[]): void {
    if (this.unreported === 0) throw new Error('events reported that no statement was given SQL for');
    this.unreported--;
    for (const id of ids) if (id) this.ids.push(id);
  }

  async holdEvent(trx: Knex.Transaction, type: HoldEventType, holdId: string): Promise<string> {
    return recordOne(
      trx,
      'select record_hold_event(h, ?, ?) as id from holds h where h.id = ?',
      type,
      holdId,
    );
  }

  async bookingEvent(trx: Knex.Transaction, type: BookingEventType, bookingId: string): Promise<string> {
    return recordOne(
      trx,
      'select record_booking_event(b, ?, ?) as id from bookings b where b.id = ?',
      type,
      bookingId,
    );
  }

  /** Throws unless every statement given event SQL reported what it recorded. */
  assertReported(): void {
    if (this.unreported > 0) {
      throw new Error(`${this.unreported} statement(s) recorded events without reporting them`);
    }
  }
}

/**
 * Records and publishes the event of one row, in one statement; its id. The trace of the request or
 * job in scope goes with it, into the delivery jobs the statement queues (db/platform/tracing.ts).
 */
async function recordOne(trx: Knex.Transaction, sql: string, type: string, id: string): Promise<string> {
  const { rows } = await trx.raw<{ rows: { id: string }[] }>(sql, [type, traceSetting(), id]);
  if (!rows[0]) throw new Error(`no row ${id} to record an event of`);
  return rows[0].id;
}

/**
 * Runs `work` with an event log in `trx`, then publishes every event the log recorded (their
 * deliveries and their jobs, in `trx`). The only way to record events.
 */
export async function recordEvents<T>(
  trx: Knex.Transaction,
  work: (log: EventLog) => Promise<T>,
): Promise<T> {
  const log = new TransactionEventLog();
  const result = await work(log);
  log.assertReported();
  await publish(trx, log.ids);
  return result;
}
