/**
 * Booked time kept per unit and UTC day, so that a venue's availability costs the same with ten
 * bookings a day as with a thousand (issue 11).
 *
 * `venue_slots()` read every live reservation of the day to build each unit's multirange: ~1,000
 * heap rows for the load venue's busy day, most of a whole-venue request's growth from 0 to 20 k
 * bookings. A booking's time only changes when a reservation is confirmed (its expiry cleared),
 * released, moved or deleted, so `booked_time` keeps, per unit and UTC day, the union of the time
 * of its active reservations without an expiry, changed by row triggers on reservations that fire
 * only when that set changes (a hold's insert and expiry fire none). Holds still running are read
 * row by row, found from the venue's holds in status ACTIVE through a partial index of holds:
 * whether a hold still blocks depends on now(), which a stored value cannot follow, and there are
 * only as many as holds are being placed. They are found from holds, not from reservations by unit
 * and time, on purpose: the reservations' exclusion index also answers "this venue's units on this
 * day", and a plan cached while the tables were empty (PL/pgSQL callers keep theirs; nothing
 * re-plans them while autovacuum does not analyze) took it and read every booking of the day again.
 * From holds there is no such choice. The index costs a confirm one more index entry on holds
 * (its status leaves ACTIVE); the reservation's expiry, indexed nowhere, still updates in place.
 *
 * Exact by construction: active reservations of one unit never overlap (reservations_no_overlap),
 * so subtracting one reservation's time from the union takes nothing of another's. Two
 * transactions booking one unit on one day serialise on its row for the rest of the shorter one.
 * A day row split by UTC day keeps each row small and bounded (a day's time) and lets a
 * reservation across midnight land in both days.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    create table booked_time (
      unit_id uuid not null,
      utc_day date not null,
      booked tstzmultirange not null,
      primary key (unit_id, utc_day)
    ) with (fillfactor = 50);
    -- Every booking rewrites its unit-day's row: half of each page is left free for the new
    -- version, so the update stays on the page (HOT: no new index entry) and the old one is
    -- pruned there, and the rows do not spread over ever more pages between vacuums.

    -- Adds (p_add) or takes away the time of a reservation on a unit, day by day.
    create function booked_time_change(p_unit_id uuid, p_during tstzrange, p_add boolean)
    returns void language plpgsql as $$
    declare
      v_first date := (lower(p_during) at time zone 'UTC')::date;
      v_last date := (upper(p_during) at time zone 'UTC')::date;
    begin
      if p_add then
        insert into booked_time as t (unit_id, utc_day, booked)
          select p_unit_id, d.day, multirange(p_during * d.span)
          from (select v_first + i as day,
                       tstzrange((v_first + i) at time zone 'UTC', (v_first + i + 1) at time zone 'UTC') as span
                  from generate_series(0, v_last - v_first) i) d
          where not isempty(p_during * d.span)
          on conflict (unit_id, utc_day) do update set booked = t.booked + excluded.booked;
      else
        update booked_time t
          set booked = t.booked - multirange(p_during * tstzrange(t.utc_day at time zone 'UTC',
                                                                  (t.utc_day + 1) at time zone 'UTC'))
          where t.unit_id = p_unit_id and t.utc_day between v_first and v_last;
      end if;
    end
    $$;

    -- A reservation counts as booked time while it is active and has no expiry.
    create function reservations_keep_booked_time() returns trigger language plpgsql as $$
    begin
      if tg_op in ('UPDATE', 'DELETE') and old.active and old.expires_at is null then
        perform booked_time_change(old.unit_id, old.during, false);
      end if;
      if tg_op in ('INSERT', 'UPDATE') and new.active and new.expires_at is null then
        perform booked_time_change(new.unit_id, new.during, true);
      end if;
      return null;
    end
    $$;

    create trigger reservations_booked_on_insert after insert on reservations
      for each row when (new.active and new.expires_at is null)
      execute function reservations_keep_booked_time();
    create trigger reservations_booked_on_update after update on reservations
      for each row when (
        (old.active and old.expires_at is null) is distinct from (new.active and new.expires_at is null)
        or (new.active and new.expires_at is null
            and (old.unit_id, old.during) is distinct from (new.unit_id, new.during)))
      execute function reservations_keep_booked_time();
    create trigger reservations_booked_on_delete after delete on reservations
      for each row when (old.active and old.expires_at is null)
      execute function reservations_keep_booked_time();

    create function reservations_clear_booked_time() returns trigger language plpgsql as $$
    begin
      truncate booked_time;
      return null;
    end
    $$;
    create trigger reservations_booked_on_truncate after truncate on reservations
      for each statement execute function reservations_clear_booked_time();

    select booked_time_change(unit_id, during, true) from reservations
      where active and expires_at is null;

    -- The holds still running, by venue: what venue_slots() reads besides booked_time.
    create index holds_running_idx on holds (venue_id, hold_expiry_at) where status = 'ACTIVE';

    create or replace function venue_slots(
      p_venue_id uuid, p_date date, p_resource_id uuid default null,
      p_from timestamptz default null, p_to timestamptz default null)
    returns table (
      resource_id uuid, slot_start timestamptz, slot_end timestamptz,
      price_rupees integer, bookable boolean, taken boolean
    ) language sql stable as $$
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
      ), rt as materialized (
        -- Per resource, once: the union of what blocks it. A slot then costs one && each.
        select r.*,
          (select range_agg(l.taken) from live l where l.unit_id = any (r.units)) as taken,
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

  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    create or replace function venue_slots(
      p_venue_id uuid, p_date date, p_resource_id uuid default null,
      p_from timestamptz default null, p_to timestamptz default null)
    returns table (
      resource_id uuid, slot_start timestamptz, slot_end timestamptz,
      price_rupees integer, bookable boolean, taken boolean
    ) language sql stable as $$
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
      ), live as materialized (
        -- per unit, the union of its live reservations: one multirange each
        select rv.unit_id, range_agg(rv.during) as taken from reservations rv, span
        where reservation_is_live(rv) and rv.during && span.during and rv.unit_id = any (span.units)
        group by rv.unit_id
      ), dark as materialized (
        select b.unit_ids, b.during from blackouts b, span
        where b.venue_id = p_venue_id and b.during && span.during
      ), rules as materialized (
        select pr.* from price_rules pr
        where pr.resource_id in (select id from r)
          and (pr.on_date is null or pr.on_date = p_date)
          and (pr.days is null or extract(isodow from p_date)::smallint = any (pr.days))
      ), rt as materialized (
        -- Per resource, once: the union of what blocks it. A slot then costs one && each.
        select r.*,
          (select range_agg(l.taken) from live l where l.unit_id = any (r.units)) as taken,
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

    drop index holds_running_idx;
    drop trigger reservations_booked_on_truncate on reservations;
    drop trigger reservations_booked_on_delete on reservations;
    drop trigger reservations_booked_on_update on reservations;
    drop trigger reservations_booked_on_insert on reservations;
    drop function reservations_clear_booked_time();
    drop function reservations_keep_booked_time();
    drop function booked_time_change(uuid, tstzrange, boolean);
    drop table booked_time;
  `);
}
