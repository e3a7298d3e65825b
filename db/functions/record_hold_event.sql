-- record_hold_event(hold, type, trace): records and publishes a hold's event (hold_created,
-- hold_cancelled, hold_expired) as the hold now is. Its id.
--
-- requires: record_event, hold_event_details
create or replace function record_hold_event(r holds, p_type text, p_trace text) returns uuid
language sql as $$
  select record_event(p_type, r.venue_id, r.partner_id, r.id, null, r.slot_id, hold_event_details(r), p_trace)
$$;
