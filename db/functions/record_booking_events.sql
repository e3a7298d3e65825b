-- record_booking_events(type, bookings, trace): records and publishes one event of `type`
-- (booking_created, booking_cancelled, booking_refunded) per booking, as each booking now is, in the
-- order given, in one go however many bookings (a hold group's, a series': record_events()).
-- `p_trace` as for record_events(). Their ids, in the order given. One booking's event:
-- record_booking_event().
--
-- requires: record_event, booking_event_details
create or replace function record_booking_events(p_type text, p_booking_ids uuid[], p_trace text) returns uuid[]
language plpgsql as $$
begin
  return record_events(p_type,
    (select jsonb_agg(jsonb_build_object('venue_id', b.venue_id, 'partner_id', b.partner_id, 'hold_id', b.hold_id,
                                         'booking_id', b.id, 'slot_id', b.slot_id,
                                         'details', booking_event_details(b))
                      order by x.n)
       from unnest(p_booking_ids) with ordinality as x(booking_id, n) join bookings b on b.id = x.booking_id),
    p_trace);
end
$$;
