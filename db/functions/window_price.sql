-- window_price(venue, resource, start, minutes, discount): what a hold of the window costs: the sum
-- of its grid slots' prices (each the most specific price rule matching the slot's venue-local
-- date, weekday and start, the newest among equals; else the resource's base price), less the
-- membership discount `p_discount` percent, rounded to whole rupees. The same prices venue_slots()
-- shows.
--
-- (PL/pgSQL, not SQL: its plan is kept for the session rather than made again at every call.)
create or replace function window_price(
  p_venue venues, p_resource resources, p_start timestamptz, p_minutes integer, p_discount integer
) returns integer
language plpgsql stable as $$
begin
  return (
    with slot as (
      select s as slot_start, (s at time zone p_venue.timezone) as local_start
        from generate_series(p_start, p_start + make_interval(mins => p_minutes - p_resource.duration_minutes),
                             make_interval(mins => p_resource.duration_minutes)) s
    )
    select round((sum(coalesce((
             select pr.price_rupees from price_rules pr
              where pr.resource_id = p_resource.id
                and (pr.on_date is null or pr.on_date = s.local_start::date)
                and (pr.days is null or extract(isodow from s.local_start::date)::smallint = any (pr.days))
                and (pr.from_time is null
                     or (s.local_start::time >= pr.from_time and s.local_start::time < pr.to_time))
              order by pr.specificity desc, pr.created_at desc, pr.id desc
              limit 1), p_resource.price_rupees)) * (100 - p_discount))::numeric / 100)::integer
      from slot s
  );
end
$$;
