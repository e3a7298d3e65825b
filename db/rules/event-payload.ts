/**
 * The JSON body of an event as partners receive it: what every webhook delivery POSTs (with the
 * attempt's `delivery_id`) and what the missed-event pull lists (with `delivery_id` null). One
 * function for both, so the two cannot drift apart.
 */
import type { EventRow } from '../queries/events.ts';
import type { WebhookEvent } from './webhook-signature.ts';

export function eventPayload<D extends string | null>(
  event: EventRow,
  deliveryId: D,
): Omit<WebhookEvent, 'delivery_id'> & { delivery_id: D } {
  return {
    event_id: event.id,
    event_type: event.event_type,
    timestamp: event.occurred_at.toISOString(),
    venue_id: event.venue_id,
    slot_id: event.slot_id,
    hold_id: event.hold_id,
    booking_id: event.booking_id,
    partner_id: event.partner_id,
    details: event.details,
    delivery_id: deliveryId,
  };
}
