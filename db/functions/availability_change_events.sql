-- availability_change_events(change): the events of a change, in their order (`k` 0, 1, …),
-- each with the resource it is of (null for a venue-wide range) and its JSON as the feed lists it
-- (the cursor aside: the API writes it from the change's position and `k`).
--
-- A `range` change is one `range` event. A `slot` change is one `slot` event per grid slot its
-- windows affect, by start and then resource: the slots of the changed resources, and of every
-- resource sharing a unit with one (its parts, the convertibles made of it), that overlap a changed
-- window, on the dates availability shows (venue_slots(): a date outside the booking window, or a
-- resource's closed day, shows none). Only resources that existed when the change was recorded
-- count, so a change's events stay the same, in the same order, on every read. Each slot comes with
-- its state now, exactly as GET /slots/availability shows it now (price, is_available), and
-- `held_until`: when it is unavailable only because of ACTIVE holds (the venue's rules allow it, and
-- no booking overlaps it on its units), the latest of their expiries; otherwise null.
--
-- requires: resource_units, venue_slots, slot_id, iso_utc, reservation_is_live
create or replace function availability_change_events(c availability_changes)
returns table (k integer, resource_id uuid, event jsonb)
language plpgsql stable as $$
#variable_conflict use_column
begin
  if c.kind = 'range' then
    return query select 0, c.range_resource_id, jsonb_build_object(
      'type', 'range', 'venue_id', c.venue_id, 'resource_id', c.range_resource_id,
      'from', to_char(c.from_date, 'YYYY-MM-DD'), 'to', to_char(c.to_date, 'YYYY-MM-DD'), 'reason', c.reason);
    return;
  end if;
  return query
  with changed as (
    select w.resource_id, w.during from unnest(c.resource_ids, c.windows) as w(resource_id, during)
  ), affected as (
    select distinct s.id as resource_id, resource_units(s.id) as units, s.duration_minutes, ch.during
      from changed ch
      join resources s on s.venue_id = c.venue_id and s.created_at <= c.recorded_at
                      and resource_units(s.id) && resource_units(ch.resource_id)
  ), slot as (
    select distinct on (vs.slot_start, vs.resource_id) vs.*, a.units
      from affected a
      join venues v on v.id = c.venue_id
      cross join lateral (select distinct d
                            from unnest(array[(lower(a.during) at time zone v.timezone)::date,
                                              ((upper(a.during) - interval '1 microsecond') at time zone v.timezone)::date]) d) d
      -- venue_slots() keeps the slots inside [from, to]: these bounds keep those overlapping the window.
      cross join lateral venue_slots(c.venue_id, d.d, a.resource_id,
                                     lower(a.during) - make_interval(mins => a.duration_minutes) + interval '1 microsecond',
                                     upper(a.during) + make_interval(mins => a.duration_minutes) - interval '1 microsecond') vs
     order by vs.slot_start, vs.resource_id
  )
  select (row_number() over (order by s.slot_start, s.resource_id) - 1)::integer, s.resource_id,
         jsonb_build_object(
           'type', 'slot', 'venue_id', c.venue_id, 'slot_id', slot_id(s.resource_id, s.slot_start),
           'resource_id', s.resource_id, 'slot_start', iso_utc(s.slot_start), 'slot_end', iso_utc(s.slot_end),
           'price_rupees', s.price_rupees, 'is_available', s.bookable and not s.taken,
           'held_until', case when s.bookable and s.taken then (
             select case when bool_or(rv.expires_at is null) then null else iso_utc(max(rv.expires_at)) end
               from reservations rv
              where rv.active and rv.unit_id = any (s.units) and rv.during && tstzrange(s.slot_start, s.slot_end)
                and reservation_is_live(rv)) end)
    from slot s
   order by s.slot_start, s.resource_id;
end
$$;
