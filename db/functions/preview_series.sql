-- preview_series(partner, venue, resource, first date, start time, minutes, count, interval,
-- excluded dates, phone): POST /bookings/series/preview, a hint like availability: the venue (the
-- partner's, `venue_not_authorized`), the resource (one of the venue's, `unknown_resource`), then
-- every occurrence as judge_series() judges it without locking, each holdable one with what a hold
-- of its window would cost now (window_price(), the customer's membership discount applied).
-- Nothing is held or stored. JSON: `{timezone, occurrences: [{occurrence_index, local_date,
-- slot_start, slot_end, utc_offset, excluded, reason, price_rupees}]}`.
--
-- requires: authorized_venues, judge_series, window_price, membership_discount
create or replace function preview_series(
  p_partner_id uuid, p_venue_id uuid, p_resource_id text, p_first_date date, p_start_time time, p_minutes integer,
  p_count integer, p_interval_weeks integer, p_excluded date[], p_customer_phone text
) returns jsonb
language plpgsql as $$
declare
  v_venue venues;
  v_resource resources;
  v_discount integer;
begin
  select v.* into v_venue from authorized_venues(p_partner_id) v where v.id = p_venue_id;
  if not found then
    raise exception using errcode = 'PB000', message = 'venue_not_authorized';
  end if;
  select r.* into v_resource from resources r
   where r.venue_id = v_venue.id
     and r.id = case when p_resource_id ~* '^[0-9a-f]{8}-([0-9a-f]{4}-){3}[0-9a-f]{12}$' then p_resource_id::uuid end;
  if not found then
    raise exception using errcode = 'PB000', message = 'unknown_resource';
  end if;
  v_discount := membership_discount(v_venue.id, p_customer_phone);
  return jsonb_build_object(
    'timezone', v_venue.timezone,
    'occurrences', (
      select jsonb_agg(to_jsonb(j) || jsonb_build_object('price_rupees',
               case when not j.excluded and j.reason is null
                    then window_price(v_venue, v_resource, j.slot_start, p_minutes, v_discount) end)
             order by j.occurrence_index)
        from judge_series(v_venue, v_resource, p_first_date, p_start_time, p_minutes, p_count, p_interval_weeks,
                          p_excluded, false) j));
end
$$;
