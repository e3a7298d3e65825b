-- availability_change_events(changes): the events of these changes, each change's in their order
-- (`k` 0, 1, …), each with its change's position, the resource it is of (null for a venue-wide
-- range) and its JSON as the feed lists it (the cursor aside: the API writes it from the position
-- and `k`).
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
-- Set-based over all the changes at once: each window on each resource is looked up on the grid
-- once however many changes name it (a hold and its confirm name the same one), and each slot's
-- state is computed once however many changes list it.
--
-- requires: resource_units, venue_slots, slot_id, iso_utc, reservation_is_live
create or replace function availability_change_events(p_changes availability_changes[])
returns table (change_position bigint, k integer, resource_id uuid, event jsonb)
language sql stable as $$
with c as (
  select * from unnest(p_changes)
), unit as materialized (
  -- The units of every resource of these venues, once.
  select s.id, s.venue_id, s.created_at, s.duration_minutes, resource_units(s.id) as units
    from resources s where s.venue_id in (select c.venue_id from c where c.kind = 'slot')
), member as materialized (
  select u.id as resource_id, m.unit_id from unit u cross join lateral unnest(u.units) as m(unit_id)
), window_of as materialized (
  -- Each slot change's windows, each on its resource.
  select c.position, c.venue_id, c.recorded_at, w.resource_id, w.during
    from c cross join lateral unnest(c.resource_ids, c.windows) as w(resource_id, during)
   where c.kind = 'slot'
), affected as (
  -- Each window on every resource sharing a unit with its own (found by unit, in hash joins), of
  -- those that existed when the change was recorded.
  select distinct w.position, w.venue_id, s.id as resource_id, s.duration_minutes, w.during
    from window_of w
    join member changed on changed.resource_id = w.resource_id
    join member sharing on sharing.unit_id = changed.unit_id
    join unit s on s.id = sharing.resource_id and s.created_at <= w.recorded_at
), probe as (
  select distinct a.venue_id, a.resource_id, a.duration_minutes, a.during from affected a
), slot as (
  -- The grid slots overlapping each probed window, on the venue-local dates it touches.
  select p.venue_id, p.resource_id as probe_resource_id, p.during as probe_during, vs.*
    from probe p
    join venues v on v.id = p.venue_id
    cross join lateral (select distinct d
                          from unnest(array[(lower(p.during) at time zone v.timezone)::date,
                                            ((upper(p.during) - interval '1 microsecond') at time zone v.timezone)::date]) d) d
    -- venue_slots() keeps the slots inside [from, to]: these bounds keep those overlapping the window.
    cross join lateral venue_slots(p.venue_id, d.d, p.resource_id,
                                   lower(p.during) - make_interval(mins => p.duration_minutes) + interval '1 microsecond',
                                   upper(p.during) + make_interval(mins => p.duration_minutes) - interval '1 microsecond') vs
), state as (
  -- Each slot once: its event's JSON.
  select distinct on (s.resource_id, s.slot_start) s.venue_id, s.resource_id, s.slot_start,
         jsonb_build_object(
           'type', 'slot', 'venue_id', s.venue_id, 'slot_id', slot_id(s.resource_id, s.slot_start),
           'resource_id', s.resource_id, 'slot_start', iso_utc(s.slot_start), 'slot_end', iso_utc(s.slot_end),
           'price_rupees', s.price_rupees, 'is_available', s.bookable and not s.taken,
           'held_until', case when s.bookable and s.taken then (
             -- Unit by unit, each unit's reservations read apart: the exclusion index (GiST) searches
             -- by `unit_id = x` and the window together, but a join or `unit_id = any (units)` left
             -- the planner a search by the window alone, through every unit's (0.15 ms a slot).
             select case when bool_or(x.open) then null else iso_utc(max(x.expires)) end
               from unnest(u.units) as unit(id)
              cross join lateral (
                select bool_or(rv.expires_at is null) as open, max(rv.expires_at) as expires
                  from reservations rv
                 where rv.unit_id = unit.id and rv.active and rv.during && tstzrange(s.slot_start, s.slot_end)
                   and reservation_is_live(rv)) x) end) as event
    from slot s join unit u on u.id = s.resource_id
   order by s.resource_id, s.slot_start
), listed as (
  -- Each change's slots, each once (two windows of a group may reach the same slot).
  select distinct a.position, s.resource_id, s.slot_start
    from affected a
    join slot s on s.probe_resource_id = a.resource_id and s.probe_during = a.during
)
select l.position, (row_number() over (partition by l.position order by l.slot_start, l.resource_id) - 1)::integer,
       l.resource_id, st.event
  from listed l
  join state st on st.resource_id = l.resource_id and st.slot_start = l.slot_start
union all
select c.position, 0, c.range_resource_id, jsonb_build_object(
         'type', 'range', 'venue_id', c.venue_id, 'resource_id', c.range_resource_id,
         'from', to_char(c.from_date, 'YYYY-MM-DD'), 'to', to_char(c.to_date, 'YYYY-MM-DD'), 'reason', c.reason)
  from c where c.kind = 'range'
$$;
