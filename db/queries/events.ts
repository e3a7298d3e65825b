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
 * Where an event stands in the pull's order, when it is of a venue granted to the partner now
 * (archived or not) or once (`ended_venue_grants`): a cursor the partner was handed stays a place
 * to resume from after its venue is revoked or archived. Undefined otherwise (unknown, or of a venue
 * the partner never held).
 */
export async function pullPosition(
  db: Knex,
  partnerId: string,
  eventId: string,
): Promise<{ tx: string; seq: string } | undefined> {
  const { rows } = await db.raw<{ rows: { tx: string; seq: string }[] }>(
    `select e.tx::text as tx, e.seq::text as seq from events e
      where e.id = ?
        and (exists (select from venue_grants g where g.partner_id = ? and g.venue_id = e.venue_id)
             or exists (select from ended_venue_grants g where g.partner_id = ? and g.venue_id = e.venue_id))`,
    [eventId, partnerId, partnerId],
  );
  return rows[0];
}

/**
 * The events of the venues the partner may see, in the pull's order (transaction, then place in it:
 * migration 20261128000000), at most `limit`, after `after`. Only events of transactions older than
 * every transaction still running are served, so an event that commits later never lands behind a
 * cursor already handed out.
 *
 * A page costs what its rows cost, however long the history and however rare the types asked for:
 * each venue (and each type asked for) is read from an index in the pull's order, `limit` rows at
 * most, and the rows merged. `since` is read by time (migration 20261203000000): among the events
 * at or after it, those whose transaction began after the first `limit` of them were recorded all
 * sort after those `limit` (a transaction's id is taken after it begins), so the page lies among
 * the events that began between `since` and the latest of those recordings.
 */
export async function pullEvents(
  db: Knex,
  partnerId: string,
  filters: EventPullFilters,
  after?: { tx: string; seq: string },
): Promise<EventRow[]> {
  const n = filters.limit;
  const horizon = 'e.tx < (select pg_snapshot_xmin(pg_current_snapshot()))';
  let perVenue: string;
  let bindings: unknown[];
  if (filters.since) {
    perVenue = `
      select e.* from unnest(?::text[]) t(type)
      cross join lateral (
        select e.* from events e
         where e.venue_id = v.id and e.event_type = t.type and e.occurred_at >= ? and ${horizon}
           and e.occurred_at <= (
             select coalesce(max(coalesce(f.recorded_at, 'infinity')), '-infinity')
               from (select e.recorded_at from events e
                      where e.venue_id = v.id and e.event_type = t.type and e.occurred_at >= ? and ${horizon}
                      order by e.occurred_at limit ?) f)
         order by e.tx, e.seq limit ?) e`;
    bindings = [[...(filters.types ?? EVENT_TYPES)], filters.since, filters.since, n, n];
  } else {
    const position = after ? 'and (e.tx, e.seq) > (?::xid8, ?::bigint)' : '';
    const from = after ? [after.tx, after.seq] : [];
    if (filters.types) {
      perVenue = `
        select e.* from unnest(?::text[]) t(type)
        cross join lateral (
          select e.* from events e
           where e.venue_id = v.id and e.event_type = t.type and ${horizon} ${position}
           order by e.tx, e.seq limit ?) e`;
      bindings = [[...filters.types], ...from, n];
    } else {
      perVenue = `select e.* from events e where e.venue_id = v.id and ${horizon} ${position}`;
      bindings = from;
    }
  }
  const { rows } = await db.raw<{ rows: EventRow[] }>(
    `select e.id, e.event_type, e.venue_id, e.partner_id, e.hold_id, e.booking_id, e.slot_id,
            e.occurred_at, e.details
       from authorized_venues(?) v
       cross join lateral (${perVenue} order by e.tx, e.seq limit ?) e
      order by e.tx, e.seq
      limit ?`,
    [partnerId, ...bindings, n, n] as Knex.RawBinding[],
  );
  return rows;
}

/**
 * Dates hold_expired events at their holds' `hold_expiry_at`: the event's `timestamp` is when the
 * underlying event happened (the spec), and a hold expires when it reaches `hold_expiry_at`, not
 * when its job or a new hold in its way gets round to recording it (up to a minute later, or more
 * after an outage). Never later than recorded. The pull's `since` stays exact: its bound needs an
 * event's `occurred_at` no later than its transaction's start (pullEvents()), which an earlier
 * instant keeps.
 */
export async function dateAtHoldExpiry(trx: Knex.Transaction, eventIds: readonly string[]): Promise<void> {
  if (eventIds.length === 0) return;
  await trx.raw(
    `update events e set occurred_at = least(e.occurred_at, h.hold_expiry_at)
       from holds h
      where e.id = any(?::uuid[]) and e.event_type = 'hold_expired' and h.id = e.hold_id`,
    [[...eventIds]],
  );
}
