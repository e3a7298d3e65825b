/**
 * Booking core: price rules, blackouts, memberships, holds, the reservations that make double
 * booking impossible, bookings, durable idempotency records, the event record of every state
 * change, and `venue_slots()`, the one definition of a venue's slot grid that availability and
 * holds both read.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    -- A price for matching slots of a resource. The most specific matching rule wins (a date over
    -- weekdays with hours over weekdays over hours alone over none), the newest among equals.
    create table price_rules (
      id uuid primary key default gen_random_uuid(),
      resource_id uuid not null references resources (id) on delete cascade,
      price_rupees integer not null check (price_rupees between 0 and 10000000),
      days smallint[] check (days <@ array[1, 2, 3, 4, 5, 6, 7]::smallint[] and cardinality(days) > 0),
      from_time time,
      to_time time,
      on_date date,
      specificity smallint generated always as (
        (case when on_date is not null then 4 else 0 end) +
        (case when days is not null then 2 else 0 end) +
        (case when from_time is not null then 1 else 0 end)
      ) stored,
      created_at timestamptz not null default clock_timestamp(),
      check ((from_time is null) = (to_time is null) and (from_time is null or from_time < to_time)),
      check (on_date is null or days is null)
    );
    create index price_rules_resource_idx on price_rules (resource_id);

    -- A window in which a venue (unit_ids null) or some units cannot be booked. unit_ids are the
    -- physical units of the resource named at creation, so a blackout on a full pitch covers its
    -- halves and one on a half covers the full pitch.
    create table blackouts (
      id uuid primary key default gen_random_uuid(),
      venue_id uuid not null references venues (id) on delete cascade,
      resource_id uuid references resources (id) on delete cascade,
      unit_ids uuid[],
      during tstzrange not null check (not isempty(during)),
      reason text,
      created_at timestamptz not null default now()
    );
    create index blackouts_venue_during_idx on blackouts using gist (venue_id, during);

    create table memberships (
      id uuid primary key default gen_random_uuid(),
      venue_id uuid not null references venues (id) on delete cascade,
      customer_phone text not null,
      discount_percent integer not null check (discount_percent between 1 and 100),
      expires_at timestamptz,
      created_at timestamptz not null default now()
    );
    create index memberships_venue_phone_idx on memberships (venue_id, customer_phone);

    -- The tables written on every hold and confirm (holds, reservations, bookings, idempotency_keys,
    -- events) have no foreign keys to partners, venues or resources, on purpose: each check locks
    -- the referenced row FOR KEY SHARE, so every concurrent hold at a venue would share-lock the
    -- same venue, resource and partner rows (multixacts), which cost a quarter of the throughput.
    -- Those rows are never deleted, and every id written here was read in the same transaction.
    create table holds (
      id uuid primary key default gen_random_uuid(),
      partner_id uuid not null,
      venue_id uuid not null,
      resource_id uuid not null,
      slot_id uuid not null,
      slot_start timestamptz not null,
      slot_end timestamptz not null,
      status text not null default 'ACTIVE' check (status in ('ACTIVE', 'CANCELLED', 'EXPIRED', 'CONFIRMED')),
      hold_expiry_at timestamptz not null,
      price_rupees integer not null,
      customer_phone text,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now(),
      cancelled_at timestamptz,
      cancel_reason text,
      expired_at timestamptz,
      check (slot_start < slot_end)
    );
    create index holds_partner_idx on holds (partner_id);

    -- One row per physical unit a hold or booking occupies. The exclusion constraint is what makes
    -- double booking impossible; application checks only choose the error message. expires_at is
    -- the hold's expiry while it is only held and null once booked: a row past it blocks nobody,
    -- and the next hold on its window expires its hold first.
    create table reservations (
      id bigint generated always as identity primary key,
      hold_id uuid not null references holds (id),
      unit_id uuid not null,
      resource_id uuid not null,
      during tstzrange not null,
      active boolean not null default true,
      expires_at timestamptz,
      constraint reservations_no_overlap exclude using gist (unit_id with =, during with &&) where (active)
    );
    create index reservations_hold_idx on reservations (hold_id);

    create table bookings (
      id uuid primary key default gen_random_uuid(),
      hold_id uuid not null unique references holds (id),
      partner_id uuid not null,
      venue_id uuid not null,
      resource_id uuid not null,
      slot_id uuid not null,
      slot_start timestamptz not null,
      slot_end timestamptz not null,
      status text not null default 'BOOKED' check (status in ('BOOKED', 'CANCELLED', 'REFUNDED')),
      booked_at timestamptz not null default now(),
      price_rupees integer not null,
      payment_reference text not null,
      payment_method text,
      package_purchase_id uuid,
      customer_name text not null,
      customer_phone text not null,
      customer_email text,
      cancelled_at timestamptz,
      cancel_reason text,
      refunded_at timestamptz,
      refund_reason text
    );
    create index bookings_partner_booked_idx on bookings (partner_id, booked_at desc, id desc);

    -- Durable idempotency: written in the transaction of the effect, so a retry replays a committed
    -- result or waits on the unique key for the one in flight; a failed attempt leaves no record.
    create table idempotency_keys (
      partner_id uuid not null,
      key text not null,
      operation text not null,
      fingerprint text not null,
      status_code integer,
      -- json, not jsonb: a replay returns the body exactly as first sent, key order included.
      response json,
      created_at timestamptz not null default now(),
      primary key (partner_id, key)
    );

    -- A timestamp as the API writes it: UTC ISO 8601 with milliseconds (2026-11-22T00:30:00.000Z).
    create function iso_utc(t timestamptz) returns text language sql immutable as $f$
      select to_char(t at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
    $f$;

    -- One row per committed state change of a hold or booking (written in the same transaction).
    create table events (
      id uuid primary key default gen_random_uuid(),
      event_type text not null,
      venue_id uuid not null,
      partner_id uuid not null,
      hold_id uuid,
      booking_id uuid,
      slot_id uuid not null,
      occurred_at timestamptz not null default now(),
      details jsonb not null default '{}'
    );
    create index events_hold_idx on events (hold_id);
    create index events_booking_idx on events (booking_id);
  `);

  await knex.raw(`
    -- The details of hold and booking events (the one definition): at least the resource, the
    -- window and the price, and the expiry for hold events. Taking the row lets a statement that
    -- changes a hold or booking record its event in the same round trip (from its RETURNING row).
    create function hold_event_details(h holds) returns jsonb language sql immutable as $$
      select jsonb_build_object(
        'resource_id', h.resource_id, 'slot_start', iso_utc(h.slot_start), 'slot_end', iso_utc(h.slot_end),
        'price_rupees', h.price_rupees, 'hold_expiry_at', iso_utc(h.hold_expiry_at), 'status', h.status)
    $$;
    create function booking_event_details(b bookings) returns jsonb language sql immutable as $$
      select jsonb_build_object(
        'resource_id', b.resource_id, 'slot_start', iso_utc(b.slot_start), 'slot_end', iso_utc(b.slot_end),
        'price_rupees', b.price_rupees, 'status', b.status, 'hold_id', b.hold_id)
    $$;

    -- The stable id of a slot: the same resource and start always give the same uuid (a name-based
    -- uuid, version 5 layout, over the resource and the start's epoch milliseconds). Computed,
    -- never stored.
    -- (A single expression, so PostgreSQL inlines it into the calling query.)
    create function slot_id(p_resource_id uuid, p_start timestamptz) returns uuid language sql immutable as $$
      select overlay(overlay(
        md5('booking-slot:' || p_resource_id || '/' || (extract(epoch from p_start) * 1000)::bigint)
        placing '5' from 13 for 1) placing '8' from 17 for 1)::uuid
    $$;

    -- Whether a partner may operate at a venue: granted to it and not archived.
    create function venue_authorized(p_partner_id uuid, p_venue_id uuid) returns boolean language sql stable as $$
      select exists (select 1 from venue_grants g join venues v on v.id = g.venue_id
                     where g.partner_id = p_partner_id and g.venue_id = p_venue_id and v.status <> 'archived')
    $$;

    -- The physical units of a resource: its parts when convertible, else itself.
    create function resource_units(p_resource_id uuid) returns uuid[] language sql stable as $$
      select coalesce(
        (select array_agg(part_id order by part_id) from resource_parts where resource_id = p_resource_id),
        array[p_resource_id])
    $$;

    -- The slot grid of a venue (or one resource) on a venue-local date. A resource's grid starts at
    -- its opening time and steps by its duration while the slot ends by closing time, on days it is
    -- open, from today to max_advance_days ahead. bookable: the booking rules allow a hold (venue
    -- active, starts after now plus the lead time, no blackout); taken: a live reservation of one
    -- of its units overlaps it. p_from/p_to keep only slots inside [p_from, p_to), before any
    -- price, blackout or reservation is looked at (a hold needs only the slots it covers).
    -- PL/pgSQL rather than SQL on purpose: a SQL function is inlined into every caller's query and
    -- planned anew each time (3 ms of planning for 2 ms of work); PL/pgSQL caches its plan.
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
        select r.id, r.units, r.price_rupees as base_price, v.status, v.min_lead_minutes,
               p_date + r.opens_at + make_interval(mins => i * r.duration_minutes) as local_start,
               (p_date + r.opens_at + make_interval(mins => (i + 1) * r.duration_minutes))
                 at time zone v.timezone as slot_end,
               (p_date + r.opens_at + make_interval(mins => i * r.duration_minutes))
                 at time zone v.timezone as slot_start
        from venues v
        join r on true
        cross join lateral generate_series(
          0, (extract(epoch from r.closes_at - r.opens_at)::integer / 60 - r.duration_minutes)
               / r.duration_minutes) as i
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
                 or (s.local_start::time >= pr.from_time and s.local_start::time < pr.to_time))
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
    drop function if exists venue_slots(uuid, date, uuid, timestamptz, timestamptz);
    drop function if exists hold_event_details(holds);
    drop function if exists booking_event_details(bookings);
    drop function if exists resource_units(uuid);
    drop function if exists venue_authorized(uuid, uuid);
    drop function if exists slot_id(uuid, timestamptz);
    drop table if exists events, idempotency_keys, bookings, reservations, holds, memberships, blackouts,
      price_rules;
    drop function if exists iso_utc(timestamptz);
  `);
}
