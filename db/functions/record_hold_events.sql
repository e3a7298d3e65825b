-- record_hold_events(type, holds, trace): records and publishes one event of `type` (hold_created,
-- hold_cancelled, hold_expired) per hold, as each hold now is, in the order given, in one go however
-- many holds (a hold group's: record_events()). `p_trace` as for record_events(). Their ids, in the
-- order given. One hold's event: record_hold_event().
--
-- requires: record_event, hold_event_details
create or replace function record_hold_events(p_type text, p_hold_ids uuid[], p_trace text) returns uuid[]
language plpgsql as $$
begin
  return record_events(p_type,
    (select jsonb_agg(jsonb_build_object('venue_id', h.venue_id, 'partner_id', h.partner_id, 'hold_id', h.id,
                                         'slot_id', h.slot_id, 'details', hold_event_details(h))
                      order by x.n)
       from unnest(p_hold_ids) with ordinality as x(hold_id, n) join holds h on h.id = x.hold_id),
    p_trace);
end
$$;
