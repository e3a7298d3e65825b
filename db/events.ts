/**
 * The event recorder: every change of a hold or booking records its event in the transaction that
 * makes the change, so an event exists if and only if its change committed.
 */
import type { Knex } from './knex.ts';
import * as events from './queries/events.ts';
import type { HoldRow } from './queries/holds.ts';

/** The booking fields an event describes. */
export interface BookingForEvent {
  id: string;
  hold_id: string;
  partner_id: string;
  venue_id: string;
  resource_id: string;
  slot_id: string;
  slot_start: Date;
  slot_end: Date;
  price_rupees: number;
  status: string;
}

/** Records a hold event (hold_created, hold_cancelled, hold_expired). */
export function recordHoldEvent(
  trx: Knex,
  type: 'hold_created' | 'hold_cancelled' | 'hold_expired',
  hold: HoldRow,
): Promise<string> {
  return events.insert(trx, {
    type,
    venueId: hold.venue_id,
    partnerId: hold.partner_id,
    holdId: hold.id,
    bookingId: null,
    slotId: hold.slot_id,
    details: {
      resource_id: hold.resource_id,
      slot_start: hold.slot_start.toISOString(),
      slot_end: hold.slot_end.toISOString(),
      price_rupees: hold.price_rupees,
      hold_expiry_at: hold.hold_expiry_at.toISOString(),
      status: hold.status,
    },
  });
}

/** Records a booking event (booking_created, booking_cancelled, booking_refunded). */
export function recordBookingEvent(
  trx: Knex,
  type: 'booking_created' | 'booking_cancelled' | 'booking_refunded',
  booking: BookingForEvent,
): Promise<string> {
  return events.insert(trx, {
    type,
    venueId: booking.venue_id,
    partnerId: booking.partner_id,
    holdId: booking.hold_id,
    bookingId: booking.id,
    slotId: booking.slot_id,
    details: {
      resource_id: booking.resource_id,
      slot_start: booking.slot_start.toISOString(),
      slot_end: booking.slot_end.toISOString(),
      price_rupees: booking.price_rupees,
      status: booking.status,
    },
  });
}
