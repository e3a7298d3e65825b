/**
 * Two rules, each defined once, in SQL, for every query to use (they were spelled out in
 * `venue_slots()`, the hold, availability, discovery and waitlist queries):
 *
 * - A partner may see and operate at a venue granted to it and not archived: `authorized_venues()`,
 *   which `venue_authorized()` now reads too.
 * - A reservation is live while it is active and not past its hold's expiry, and overdue when it is
 *   active but past it: `reservation_is_live()` and `reservation_is_overdue()`.
 *
 * `authorized_venues()` and the two reservation tests are single-statement SQL functions that
 * PostgreSQL inlines into the calling query, so plans stay as they were (EXPLAIN on 15 and 17, custom
 * and generic plans): `reservation_is_live(rv)` becomes `rv.active and (…)`, which still lets the
 * planner use the `where (active)` index of reservations_no_overlap, and `authorized_venues(?)` in a
 * FROM clause becomes the same join of venues and venue_grants as before. (`venue_authorized()` has a
 * sub-select, so it is not inlined; it answers for one venue at a time.) `venue_slots()` is
 * redefined to use the live test, unchanged otherwise; the constraint stays `where (active)`.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    -- The venues a partner may see and operate at: granted to it and not archived (a paused venue
    -- shows, but takes no holds). Use it as a table: from authorized_venues(?) v.
    create function authorized_venues(p_partner_id uuid) returns setof venues language sql stable as $$
      select v.* from venues v join venue_grants g on g.venue_id = v.id
      where g.partner_id = p_partner_id and v.status <> 'archived'
    $$;

    -- Whether a partner may operate at a venue: one of its authorized_venues().
    create or replace function venue_authorized(p_partner_id uuid, p_venue_id uuid) returns boolean
    language sql stable as $$
      select exists (select 1 from authorized_venues(p_partner_id) v where v.id = p_venue_id)
    $$;

    -- A live reservation blocks its units: active (not released) and not past its hold's expiry
    -- (expires_at is the expiry while the hold is only held, null once booked). The exclusion
    -- constraint keeps every active reservation apart, live or not: an overdue one is in the way
    -- until its hold is expired (by its job, or by the next hold on its window).
    create function reservation_is_live(r reservations) returns boolean language sql stable as $$
      select r.active and (r.expires_at is null or r.expires_at > now())
    $$;

    -- Active but past its hold's expiry: it blocks nobody, and its hold is due to be expired.
    create function reservation_is_overdue(r reservations) returns boolean language sql stable as $$
      select r.active and not reservation_is_live(r)
    $$;
  `);
  await knex.raw(`
    create or replace function venue_slots(
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

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    create or replace function venue_slots(
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
        where rv.active and rv.unit_id = any (span.units) and rv.during && span.during
          and (rv.expires_at is null or rv.expires_at > now())
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
  await knex.raw(`
    create or replace function venue_authorized(p_partner_id uuid, p_venue_id uuid) returns boolean language sql stable as $$
      select exists (select 1 from venue_grants g join venues v on v.id = g.venue_id
                     where g.partner_id = p_partner_id and g.venue_id = p_venue_id and v.status <> 'archived')
    $$;
    drop function if exists reservation_is_overdue(reservations);
    drop function if exists reservation_is_live(reservations);
    drop function if exists authorized_venues(uuid);
  `);
}
