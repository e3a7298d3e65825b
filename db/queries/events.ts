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
