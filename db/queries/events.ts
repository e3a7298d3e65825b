/**
 * Queries on `events`, the record of every committed state change of a hold or booking, and of
 * every waitlist promotion.
 */
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
