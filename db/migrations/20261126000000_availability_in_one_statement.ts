/**
 * Availability in one statement, at a cost that does not grow with the bookings (issue 11).
 *
 * `venue_slots()` is rewritten around one row per resource instead of per-slot lookups. What a
 * slot is checked against is gathered once per resource: the union of its units' live
 * reservations that day, and of the blackouts that cover it, each a multirange; a slot is then
 * taken, or dark, by one `&&` against its resource's multirange. The old form joined every slot to
 * every unit's reservations (a hash built per slot), so a venue-wide grid cost ~30 ms of database
 * time and grew with every booking; now ~2 ms, flat. It is a SQL function again, which PostgreSQL
 * inlines into the (cached) plan of its caller: no tuple store in between. It no longer computes
 * `slot_id`, which nothing reading the grid in SQL needs (md5 per slot was a third of the old
 * cost; the API computes the same id, db/rules/slot-id.ts, tested against `slot_id()`), nor sorts
 * its rows, which its callers group or order as they need.
 *
 * `venue_availability()` answers GET /slots/availability in one round trip: the partner's access
 * to the venue (PB000 `venue_not_authorized`), the resource's membership (PB000
 * `resource_not_in_venue`, also for an id that cannot be one: the caller passes null), then the
 * grid, one row per resource with its slots as comma-separated lists. Parsing two thousand rows of timestamps cost the web
 * process more than the database spent computing them.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    -- The return type changes (no slot_id), which create or replace cannot do.
    drop function venue_slots(uuid, date, uuid, timestamptz, timestamptz);

    create function venue_slots(
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

    -- GET /slots/availability: the grid a partner may see, one row per resource (by id), its slots
    -- as comma-separated lists, position by position: starts and ends in epoch milliseconds,
    -- prices, and whether each can be held now (t or f). The lists are in no particular order (each
    -- start says where its slot goes; an ORDER BY per list cost more than the grid). Refuses
    -- (PB000) a venue the partner may not see, then, when one resource was asked for
    -- (p_one_resource), a resource that is not one of the venue's: p_resource_id is null when the
    -- id asked for cannot be a resource's (db/queries/resources.ts, isUuid).
    create function venue_availability(
      p_partner_id uuid, p_venue_id uuid, p_date date, p_one_resource boolean, p_resource_id uuid)
    returns table (resource_id uuid, starts_ms text, ends_ms text, prices text, available text)
    language plpgsql stable as $$
    #variable_conflict use_column
    begin
      if not exists (select from authorized_venues(p_partner_id) v where v.id = p_venue_id) then
        raise exception using errcode = 'PB000', message = 'venue_not_authorized';
      end if;
      if p_one_resource and not exists (
        select from resources r where r.id = p_resource_id and r.venue_id = p_venue_id) then
        raise exception using errcode = 'PB000', message = 'resource_not_in_venue';
      end if;
      return query
      -- date_part, not extract: a float8 holds these instants exactly (whole milliseconds, years
      -- near now), and extract's numeric result was slower to make.
      select s.resource_id,
             string_agg((date_part('epoch', s.slot_start) * 1000)::bigint::text, ','),
             string_agg((date_part('epoch', s.slot_end) * 1000)::bigint::text, ','),
             string_agg(s.price_rupees::text, ','),
             string_agg(case when s.bookable and not s.taken then 't' else 'f' end, ',')
      from venue_slots(p_venue_id, p_date, p_resource_id) s
      group by s.resource_id
      order by s.resource_id;
    end
    $$;
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    drop function venue_availability(uuid, uuid, date, boolean, uuid);
    drop function venue_slots(uuid, date, uuid, timestamptz, timestamptz);
    create function venue_slots(
      p_venue_id uuid, p_date date, p_resource_id uuid default null,
      p_from timestamptz default null, p_to timestamptz default null)
    returns table (
      resource_id uuid, slot_id uuid, slot_start timestamptz, slot_end timestamptz,
      price_rupees integer, bookable boolean, taken boolean
    ) language plpgsql stable as $$
    #variable_conflict use_column
    begin
      return query
      with r as (
        -- resource_units(), written out: a function with a sub-select is not inlined, and calling it
        -- per resource cost more than the rest of the grid.
        select r.*, coalesce(
                 (select array_agg(p.part_id order by p.part_id) from resource_parts p where p.resource_id = r.id),
                 array[r.id]) as units
        from resources r
        where r.venue_id = p_venue_id and (p_resource_id is null or r.id = p_resource_id)
      ), s as (
        -- Steps in absolute time from the instant the resource opens on that local date, each slot
        -- exactly duration_minutes long, while it ends by the instant it closes. On a day the clocks
        -- change that gives an hour more or less of slots, never a zero-length or doubled one. (A
        -- local time that does not exist or repeats is read as standard time, as AT TIME ZONE does.)
        select r.id, r.units, r.price_rupees as base_price, v.status, v.min_lead_minutes,
               (g.slot_start at time zone v.timezone)::time as local_start,
               g.slot_start + make_interval(mins => r.duration_minutes) as slot_end,
               g.slot_start
        from venues v
        join r on true
        cross join lateral generate_series(
          (p_date + r.opens_at) at time zone v.timezone,
          (p_date + r.closes_at) at time zone v.timezone - make_interval(mins => r.duration_minutes),
          make_interval(mins => r.duration_minutes)) as g(slot_start)
        where v.id = p_venue_id
          and not extract(isodow from p_date)::smallint = any (r.closed_on)
          and p_date between (now() at time zone v.timezone)::date
                         and (now() at time zone v.timezone)::date + v.max_advance_days
      )
      , w as (
        select * from s
        where (p_from is null or s.slot_start >= p_from) and (p_to is null or s.slot_end <= p_to)
      )
      -- What the slots are checked against, each read once for the whole window (one index scan)
      -- rather than once per slot: a day's grid is hundreds of slots.
      , span as (
        select tstzrange(min(slot_start), max(slot_end)) as during,
               array(select distinct u from w, unnest(w.units) u) as units
        from w
      ), live as materialized (
        -- per unit, the union of its live reservations in the window: one multirange to test
        select rv.unit_id, range_agg(rv.during) as taken from reservations rv, span
        where reservation_is_live(rv) and rv.unit_id = any (span.units) and rv.during && span.during
        group by rv.unit_id
      ), dark as materialized (
        select b.unit_ids, b.during from blackouts b, span
        where b.venue_id = p_venue_id and b.during && span.during
      ), rules as materialized (
        select pr.* from price_rules pr
        where pr.resource_id in (select id from r)
          and (pr.on_date is null or pr.on_date = p_date)
          and (pr.days is null or extract(isodow from p_date)::smallint = any (pr.days))
      )
      -- The uncorrelated tests in front ("(select not exists …)") run once per call, so a venue
      -- without rules or blackouts skips the per-slot lookups.
      select s.id, slot_id(s.id, s.slot_start), s.slot_start, s.slot_end,
        case when (select not exists (select 1 from rules)) then s.base_price else coalesce((
          select pr.price_rupees from rules pr
          where pr.resource_id = s.id
            and (pr.from_time is null
                 or (s.local_start >= pr.from_time and s.local_start < pr.to_time))
          order by pr.specificity desc, pr.created_at desc, pr.id desc
          limit 1), s.base_price) end,
        s.status = 'active'
          and s.slot_start > now() + make_interval(mins => s.min_lead_minutes)
          and ((select not exists (select 1 from dark)) or not exists (
            select 1 from dark b
            where b.during && tstzrange(s.slot_start, s.slot_end)
              and (b.unit_ids is null or b.unit_ids && s.units))),
        exists (
          select 1 from unnest(s.units) as u join live on live.unit_id = u
          where live.taken && tstzrange(s.slot_start, s.slot_end))
      from w as s
      order by s.slot_start, s.id;
    end
    $$;
  `);
}
