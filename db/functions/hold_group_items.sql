-- hold_group_items(group, resources, starts, minutes, prices, discount, occurrences): the windows
-- of a group that has just been placed become its holds, in the order given (item_index 0, 1, …),
-- every one an ordinary hold: the group's expiry, the group's customer, its price as given
-- (window_price(), the discount applied), its reservations on every unit of its resource and its
-- hold_created, recorded in item order; one availability change for all of them. A series' group gives each hold's occurrence index
-- (`p_occurrences`, null for a plain group), which its holds carry with the series. The group gets one expiry job (send_job_hold_group_expire()), however many holds it
-- has. The caller has judged and locked every window; the exclusion constraint has the last word.
-- Shared by the group's and the series' placements (place_hold_group(), place_series()).
--
-- requires: slot_id, resource_units, record_availability_change, record_hold_events, job_trace
create or replace function hold_group_items(
  p_group hold_groups, p_resources uuid[], p_starts timestamptz[], p_minutes integer[], p_prices integer[],
  p_discount integer, p_occurrences integer[]
) returns void
language plpgsql as $$
declare
  v_hold_ids uuid[];
begin
  with held as (
    insert into holds (partner_id, venue_id, resource_id, slot_id, slot_start, slot_end, hold_expiry_at,
                       price_rupees, customer_phone, discount_percent, hold_group_id, item_index, series_id,
                       series_occurrence_index)
    select p_group.partner_id, p_group.venue_id, x.resource_id, slot_id(x.resource_id, x.start), x.start,
           x.start + make_interval(mins => x.minutes), p_group.hold_expiry_at, x.price, p_group.customer_phone,
           p_discount, p_group.id, x.n - 1, p_group.series_id, p_occurrences[x.n]
      from unnest(p_resources, p_starts, p_minutes, p_prices) with ordinality as x(resource_id, start, minutes, price, n)
    returning *
  ), reserved as (
    insert into reservations (hold_id, unit_id, resource_id, during, expires_at)
    select h.id, u, h.resource_id, tstzrange(h.slot_start, h.slot_end), h.hold_expiry_at
      from held h, unnest(resource_units(h.resource_id)) u
  )
  select array_agg(h.id order by h.item_index) into v_hold_ids from held h;
  perform record_availability_change(p_group.venue_id, p_resources,
    array(select tstzrange(x.start, x.start + make_interval(mins => x.minutes))
            from unnest(p_starts, p_minutes) with ordinality as x(start, minutes, n) order by x.n));
  perform record_hold_events('hold_created', v_hold_ids, null);
  perform from send_job_hold_group_expire(jsonb_build_object('hold_group_id', p_group.id) || job_trace(),
                                          p_group.hold_expiry_at);
end
$$;
