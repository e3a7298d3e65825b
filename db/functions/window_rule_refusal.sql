-- window_rule_refusal(venue, resource, start, minutes, advance days): why the venue's rules refuse a
-- window on a resource, or null: the first of these that applies, the reasons of a hold group's
-- items and of a series' occurrences (after UNKNOWN_RESOURCE, before TAKEN):
--
--   NOT_ON_GRID            not a start of the resource's day grid on its venue-local date (the grid
--                          is computed for any date, whatever closed_on and the booking window say:
--                          slots step in absolute time from the instant the resource opens that
--                          date, each duration_minutes long, while they end by the instant it
--                          closes), or a duration not a whole multiple of duration_minutes, or an
--                          end after the end of that day's last grid slot;
--   IN_PAST                starts at or before now;
--   BEYOND_BOOKING_WINDOW  on a venue-local date after today + `p_advance_days` (the venue's
--                          max_advance_days, or its series window for a series);
--   CLOSED                 the venue is paused, or the date is one of the resource's closed_on days;
--   LEAD_TIME              starts before now + the venue's min_lead_minutes;
--   BLACKOUT               overlaps a blackout of the venue, or of the resource's units.
--
-- Its statements run on generic plans kept per connection (plan_cache_mode): PL/pgSQL chose
-- custom plans for them and planned them again on every call, 0.05–0.2 ms each (pg_stat_statements).
--
-- requires: resource_units
create or replace function window_rule_refusal(
  p_venue venues, p_resource resources, p_start timestamptz, p_minutes integer, p_advance_days integer
) returns text
language plpgsql stable
set plan_cache_mode = force_generic_plan
as $$
declare
  v_date date := (p_start at time zone p_venue.timezone)::date;
  v_opens timestamptz := (v_date + p_resource.opens_at) at time zone p_venue.timezone;
  v_closes timestamptz := (v_date + p_resource.closes_at) at time zone p_venue.timezone;
  v_step numeric := p_resource.duration_minutes * 60;
  v_from_open numeric := extract(epoch from p_start) - extract(epoch from v_opens);
  v_grid_end numeric := floor((extract(epoch from v_closes) - extract(epoch from v_opens)) / v_step) * v_step;
  v_end timestamptz := p_start + make_interval(mins => p_minutes);
begin
  if v_from_open < 0 or mod(v_from_open, v_step) <> 0 or p_minutes % p_resource.duration_minutes <> 0
     or v_from_open + p_minutes * 60 > v_grid_end then
    return 'NOT_ON_GRID';
  end if;
  if p_start <= now() then
    return 'IN_PAST';
  end if;
  if v_date > (now() at time zone p_venue.timezone)::date + p_advance_days then
    return 'BEYOND_BOOKING_WINDOW';
  end if;
  if p_venue.status <> 'active' or extract(isodow from v_date)::smallint = any (p_resource.closed_on) then
    return 'CLOSED';
  end if;
  if p_start < now() + make_interval(mins => p_venue.min_lead_minutes) then
    return 'LEAD_TIME';
  end if;
  if exists (select from blackouts b
              where b.venue_id = p_venue.id and b.during && tstzrange(p_start, v_end)
                and (b.unit_ids is null or b.unit_ids && resource_units(p_resource.id))) then
    return 'BLACKOUT';
  end if;
  return null;
end
$$;
