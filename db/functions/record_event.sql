-- record_event(type, venue, partner, hold, booking, slot, details, trace): the one way an event is
-- recorded, from SQL and TypeScript alike (db/rules/events.ts): the row, and its publication
-- (publish_event()), in the caller's transaction, so an event exists if and only if its change
-- committed, and every event has its deliveries. `p_trace` (the request's or job's, as JSON) is
-- set for the rest of the transaction first: the deliveries and the jobs sent after carry it.
-- Partners see the event as db/rules/event-payload.ts shapes it. Its id.
--
-- requires: publish_event
create or replace function record_event(
  p_type text, p_venue_id uuid, p_partner_id uuid, p_hold_id uuid, p_booking_id uuid, p_slot_id uuid,
  p_details jsonb, p_trace text default null
) returns uuid
language plpgsql as $$
declare
  v_id uuid;
begin
  if p_trace is not null then
    perform set_config('booking.trace', p_trace, true);
  end if;
  insert into events (event_type, venue_id, partner_id, hold_id, booking_id, slot_id, details)
    values (p_type, p_venue_id, p_partner_id, p_hold_id, p_booking_id, p_slot_id, p_details)
    returning id into v_id;
  perform publish_event(v_id);
  return v_id;
end
$$;
