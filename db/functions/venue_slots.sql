-- venue_slots(venue, date, resource, from, to): the grid of a venue-local date, the one that
-- availability shows and holds are checked against: per resource (one, when asked), each slot with
-- its start, end, price (the most specific price rule, else the base price), whether the venue's
-- rules allow it (active venue, not started, outside the lead time, not blacked out) and whether it
-- is taken (a live reservation on a unit it occupies). `from` and `to` narrow it to the slots inside
-- a window (a hold's).
--
-- Slots step in absolute time from the instant the resource opens on that date, each exactly
-- duration_minutes long, while they end by the instant it closes: on a day the clocks change that
-- gives an hour more or less of slots, never a zero-length or doubled one. What is taken is read
-- once per resource as a multirange (booked time per unit and UTC day from `booked_time`, and the
-- holds still running), so a slot costs one && and a day with a thousand bookings costs about what
-- an empty one does.
create or replace function venue_slots(
  p_venue_id uuid, p_date date, p_resource_id uuid default null, p_from timestamptz default null,
  p_to timestamptz default null
) returns table (
  resource_id uuid, slot_start timestamptz, slot_end timestamptz, price_rupees integer, bookable boolean,
  taken boolean
)
language sql stable as $$
with r as materialized (
  -- The resources, each with its units (resource_units(), written out: it is not inlined) and
  -- the instants it opens and closes on that local date.
  select r.id, r.price_rupees, v.status, v.min_lead_minutes, v.timezone,
         make_interval(mins => r.duration_minutes) as step,
         (p_date + r.opens_at) at time zone v.timezone as opens,
         (p_date + r.closes_at) at time zone v.timezone as closes,
         coalesce((select array_agg(p.part_id order by p.part_id) from resource_parts p
                   where p.resource_id = r.id),
                  array[r.id]) as units
  from venues v join resources r on r.venue_id = v.id
  where v.id = p_venue_id and (p_resource_id is null or r.id = p_resource_id)
    and not extract(isodow from p_date)::smallint = any (r.closed_on)
    and p_date between (now() at time zone v.timezone)::date
                   and (now() at time zone v.timezone)::date + v.max_advance_days
), span as (
  -- What the slots can overlap: the hours the resources are open (narrowed to the window
  -- asked for), on their units. No row when no resource is open, so nothing is read.
  select tstzrange(greatest(min(opens), p_from), least(max(closes), p_to)) as during,
         array(select distinct u from r, unnest(r.units) u) as units
  from r having count(*) > 0
     and greatest(min(opens), p_from) <= least(max(closes), p_to)
), live as materialized (
  -- What is taken on the units, in pieces: booked time per unit and UTC day from booked_time
  -- (kept by the triggers on reservations, one row however many bookings), then the holds
  -- still running, read one by one (whether a hold still runs depends on now()), found from
  -- the venue's ACTIVE holds and never from reservations by unit and time (see the migration
  -- 20261127000000). Together these are exactly the live reservations (reservation_is_live()).
  select b.unit_id, b.booked as taken from booked_time b, span
  where b.unit_id = any (span.units)
    and b.utc_day between (lower(span.during) at time zone 'UTC')::date
                      and (upper(span.during) at time zone 'UTC')::date
  union all
  select rv.unit_id, multirange(rv.during) from holds h, span, reservations rv
  where h.venue_id = p_venue_id and h.status = 'ACTIVE' and h.hold_expiry_at > now()
    and tstzrange(h.slot_start, h.slot_end) && span.during
    and rv.hold_id = h.id and rv.active and rv.expires_at > now()
), dark as materialized (
  select b.unit_ids, b.during from blackouts b, span
  where b.venue_id = p_venue_id and b.during && span.during
), rules as materialized (
  select pr.* from price_rules pr
  where pr.resource_id in (select id from r)
    and (pr.on_date is null or pr.on_date = p_date)
    and (pr.days is null or extract(isodow from p_date)::smallint = any (pr.days))
), taken as materialized (
  -- What is taken per resource: its units' live pieces, found by unit in one join.
  select ru.id, range_agg(l.taken) as taken
  from (select r.id, unnest(r.units) as unit_id from r) ru
  join live l on l.unit_id = ru.unit_id
  group by ru.id
), rt as materialized (
  -- Per resource, once: the union of what blocks it. A slot then costs one && each.
  select r.*,
    (select t.taken from taken t where t.id = r.id) as taken,
    (select range_agg(b.during) from dark b where b.unit_ids is null or b.unit_ids && r.units) as dark
  from r
), s as (
  -- Steps in absolute time from the instant the resource opens on that local date, each slot
  -- exactly duration_minutes long, while it ends by the instant it closes. On a day the clocks
  -- change that gives an hour more or less of slots, never a zero-length or doubled one. (A
  -- local time that does not exist or repeats is read as standard time, as AT TIME ZONE does.)
  select rt.id, rt.price_rupees as base_price, rt.status, rt.min_lead_minutes, rt.taken, rt.dark,
         (g.slot_start at time zone rt.timezone)::time as local_start,
         tstzrange(g.slot_start, g.slot_start + rt.step) as during
  from rt cross join lateral generate_series(rt.opens, rt.closes - rt.step, rt.step) as g(slot_start)
  where (p_from is null or g.slot_start >= p_from) and (p_to is null or g.slot_start + rt.step <= p_to)
)
-- The uncorrelated test in front ("(select not exists …)") runs once per call, so a venue
-- without price rules skips the per-slot lookup.
select s.id, lower(s.during), upper(s.during),
  case when (select not exists (select 1 from rules)) then s.base_price else coalesce((
    select pr.price_rupees from rules pr
    where pr.resource_id = s.id
      and (pr.from_time is null or (s.local_start >= pr.from_time and s.local_start < pr.to_time))
    order by pr.specificity desc, pr.created_at desc, pr.id desc
    limit 1), s.base_price) end,
  s.status = 'active'
    and lower(s.during) > now() + make_interval(mins => s.min_lead_minutes)
    and not coalesce(s.dark && s.during, false),
  coalesce(s.taken && s.during, false)
from s
$$;
