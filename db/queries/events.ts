/**
 * The `events` table, the record of every committed state change of a hold or booking, and of
 * every waitlist promotion: its types, its rows, and the interface through which statements write
 * to it (the recorder, db/rules/events.ts, implements it).
 */
import type { Knex } from '../postgres/knex.ts';

/** Every event type; waitlist_promoted is the contract's additive type. */
export const EVENT_TYPES = [
  'hold_created',
  'hold_cancelled',
  'hold_expired',
  'booking_created',
  'booking_cancelled',
  'booking_refunded',
  'waitlist_promoted',
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

/** A row of `events`. */
export interface EventRow {
  id: string;
  event_type: EventType;
  venue_id: string;
  partner_id: string;
  hold_id: string | null;
  booking_id: string | null;
  slot_id: string;
  occurred_at: Date;
  details: Record<string, unknown>;
}

export type HoldEventType = Extract<EventType, 'hold_created' | 'hold_cancelled' | 'hold_expired'>;
export type BookingEventType = Extract<
  EventType,
  'booking_created' | 'booking_cancelled' | 'booking_refunded'
>;

/**
 * What statements that record events are given: the SQL, and where to report what it recorded.
 * Only the event recorder (db/rules/events.ts, `recordEvents()`) makes one, and it publishes
 * everything reported; query functions that record events take one as a parameter.
 */
export interface EventLog {
  /**
   * One waitlist_promoted event per row of `source`: promoted `waitlist_entries` rows that also
   * carry the freed window as `window_start`, `window_end` and `window_price`.
   */
  waitlistPromotedEvents(source: string): string;
  /** Reports the ids a statement's event insert returned (none, when it changed no row). */
  recorded(ids: readonly (string | null | undefined)[]): void;
  /** Records and publishes the event of one hold as it now is in this transaction; its id. */
  holdEvent(trx: Knex.Transaction, type: HoldEventType, holdId: string): Promise<string>;
  /** As holdEvent, for one booking. */
  bookingEvent(trx: Knex.Transaction, type: BookingEventType, bookingId: string): Promise<string>;
}

/** What the missed-event pull asks for (GET /api/v1/events). */
export interface EventPullFilters {
  /** Only events after this one in the pull's order; it must be one the partner may see. */
  startingAfter?: string | undefined;
  /** Only events whose occurred_at is at or after this instant. */
  since?: Date | undefined;
  types?: readonly EventType[] | undefined;
  limit: number;
}

/**
 * Where an event stands in the pull's order, when it is of a venue the partner may see (granted and not
 * archived: venue_authorized());
 * undefined otherwise (unknown, or not the partner's to see).
 */
export async function pullPosition(
  db: Knex,
  partnerId: string,
  eventId: string,
): Promise<{ tx: string; seq: string } | undefined> {
  const { rows } = await db.raw<{ rows: { tx: string; seq: string }[] }>(
    `select e.tx::text as tx, e.seq::text as seq from events e
      where e.id = ? and venue_authorized(?, e.venue_id)`,
    [eventId, partnerId],
  );
  return rows[0];
}

/**
 * The events of the venues granted to the partner, in the pull's order (transaction, then place
 * in it: migration 20261128000000), at most `limit`, after `after`. Only events of transactions
 * older than every transaction still running are served, so an event that commits later never
 * lands behind a cursor already handed out. Each venue is read from events_venue_position_idx (or
 * events_venue_occurred_idx for `since`), `limit` rows at most, and the venues' rows merged.
 */
export async function pullEvents(
  db: Knex,
  partnerId: string,
  filters: EventPullFilters,
  after?: { tx: string; seq: string },
): Promise<EventRow[]> {
  const conditions: string[] = [];
  const bindings: (string | Date | string[])[] = [];
  if (after) {
    conditions.push('(e.tx, e.seq) > (?::xid8, ?::bigint)');
    bindings.push(after.tx, after.seq);
  }
  if (filters.since) {
    conditions.push('e.occurred_at >= ?');
    bindings.push(filters.since);
  }
  if (filters.types) {
    conditions.push('e.event_type = any (?)');
    bindings.push([...filters.types]);
  }
  const { rows } = await db.raw<{ rows: EventRow[] }>(
    `select e.id, e.event_type, e.venue_id, e.partner_id, e.hold_id, e.booking_id, e.slot_id,
            e.occurred_at, e.details
       from authorized_venues(?) v
       cross join lateral (
         select * from events e
          where e.venue_id = v.id
            and e.tx < (select pg_snapshot_xmin(pg_current_snapshot()))
            ${conditions.map((c) => `and ${c}`).join(' ')}
          order by e.tx, e.seq
          limit ?) e
      order by e.tx, e.seq
      limit ?`,
    [partnerId, ...bindings, filters.limit, filters.limit],
  );
  return rows;
}
