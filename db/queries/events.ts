/** Queries on `events`, the record of every committed state change of a hold or booking. */
import type { Knex } from '../knex.ts';

export const EVENT_TYPES = [
  'hold_created',
  'hold_cancelled',
  'hold_expired',
  'booking_created',
  'booking_cancelled',
  'booking_refunded',
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

/** The fields of a new event. */
export interface NewEvent {
  type: EventType;
  venueId: string;
  partnerId: string;
  holdId: string | null;
  bookingId: string | null;
  slotId: string;
  details: Record<string, unknown>;
}

/** Inserts an event and returns its id. */
export async function insert(trx: Knex, event: NewEvent): Promise<string> {
  const [row] = await trx('events')
    .insert({
      event_type: event.type,
      venue_id: event.venueId,
      partner_id: event.partnerId,
      hold_id: event.holdId,
      booking_id: event.bookingId,
      slot_id: event.slotId,
      details: event.details,
    })
    .returning<{ id: string }[]>('id');
  return row!.id;
}
