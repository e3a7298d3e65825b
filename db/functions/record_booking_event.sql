-- record_booking_event(booking, type, trace): records and publishes a booking's event
-- (booking_created, booking_cancelled, booking_refunded) as the booking now is. Its id.
--
-- requires: record_event, booking_event_details
create or replace function record_booking_event(r bookings, p_type text, p_trace text) returns uuid
language sql as $$
  select record_event(p_type, r.venue_id, r.partner_id, r.hold_id, r.id, r.slot_id, booking_event_details(r), p_trace)
$$;
