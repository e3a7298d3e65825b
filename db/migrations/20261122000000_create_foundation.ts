/**
 * The platform tables: partners and their API keys, venues with their booking rules, resources
 * (including convertible ones made of parts), venue grants, and the per-key rate-limit window.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  // btree_gist lets one exclusion constraint mix equality on a unit with overlap on a time range.
  await knex.raw('create extension if not exists btree_gist');

  await knex.raw(`
    create table partners (
      id uuid primary key default gen_random_uuid(),
      name text not null check (length(name) between 1 and 200),
      rate_limit integer not null default 60 check (rate_limit between 1 and 1000000),
      created_at timestamptz not null default now()
    );

    -- Only a SHA-256 of each key is stored: keys are 256 random bits, so a slow hash adds nothing.
    create table api_keys (
      id uuid primary key default gen_random_uuid(),
      partner_id uuid not null references partners (id) on delete cascade,
      key_hash text not null unique,
      created_at timestamptz not null default now(),
      expires_at timestamptz,
      revoked_at timestamptz
    );
    create index api_keys_partner_idx on api_keys (partner_id);

    create table venues (
      id uuid primary key default gen_random_uuid(),
      name text not null check (length(name) between 1 and 200),
      address text not null check (length(address) between 1 and 500),
      city text not null check (length(city) between 1 and 200),
      timezone text not null default 'Asia/Kolkata',
      hold_seconds integer not null default 900 check (hold_seconds between 30 and 86400),
      min_lead_minutes integer not null default 0 check (min_lead_minutes between 0 and 43200),
      max_advance_days integer not null default 21 check (max_advance_days between 0 and 366),
      status text not null default 'active' check (status in ('active', 'paused', 'archived')),
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now()
    );

    -- closed_on holds ISO weekday numbers: 1 = Monday … 7 = Sunday.
    create table resources (
      id uuid primary key default gen_random_uuid(),
      venue_id uuid not null references venues (id) on delete cascade,
      resource_type text not null check (length(resource_type) between 1 and 100),
      sport_category text not null check (length(sport_category) between 1 and 100),
      duration_minutes integer not null check (duration_minutes between 15 and 1440),
      price_rupees integer not null check (price_rupees between 0 and 10000000),
      opens_at time not null,
      -- closes_at may be 24:00 for a resource open until midnight.
      closes_at time not null,
      closed_on smallint[] not null default '{}'
        check (closed_on <@ array[1, 2, 3, 4, 5, 6, 7]::smallint[]),
      -- clock_timestamp(), not now(): resources created in one transaction keep their order.
      created_at timestamptz not null default clock_timestamp(),
      check (opens_at < closes_at)
    );
    create index resources_venue_idx on resources (venue_id);

    -- A convertible resource (a full pitch) occupies each of its parts (the halves).
    create table resource_parts (
      resource_id uuid not null references resources (id) on delete cascade,
      part_id uuid not null references resources (id) on delete cascade,
      primary key (resource_id, part_id),
      check (resource_id <> part_id)
    );
    create index resource_parts_part_idx on resource_parts (part_id);

    create table venue_grants (
      partner_id uuid not null references partners (id) on delete cascade,
      venue_id uuid not null references venues (id) on delete cascade,
      created_at timestamptz not null default now(),
      primary key (partner_id, venue_id)
    );
    create index venue_grants_venue_idx on venue_grants (venue_id);
  `);

  await knex.raw(`
    -- The sliding window of one API key: every admitted request inside the last 60 seconds is a
    -- row of rate_limit_hits; rate_limit_windows counts them and is the lock that serialises the
    -- requests of one key across every web process.
    create table rate_limit_windows (
      api_key_id uuid primary key references api_keys (id) on delete cascade,
      hits_in_window integer not null default 0
    );
    create table rate_limit_hits (
      api_key_id uuid not null references api_keys (id) on delete cascade,
      hit_at timestamptz not null
    );
    create index rate_limit_hits_key_time_idx on rate_limit_hits (api_key_id, hit_at);

    -- Admits or refuses one request of a key, exactly: a request is admitted when fewer than
    -- p_limit admitted requests lie in the 60 seconds before it. Amortised O(1): each hit row is
    -- inserted once and deleted once, so a large limit costs no more per request than a small one.
    create function take_rate_limit_token(
      p_api_key_id uuid, p_limit integer,
      out allowed boolean, out remaining integer, out reset_ms bigint
    ) language plpgsql as $$
    declare
      v_count integer;
      v_expired integer;
      v_now timestamptz;
      v_oldest timestamptz;
    begin
      insert into rate_limit_windows (api_key_id) values (p_api_key_id) on conflict do nothing;
      select hits_in_window into v_count from rate_limit_windows
        where api_key_id = p_api_key_id for update;
      -- Read the clock only once the lock is held, so hit times follow the order of admission.
      v_now := clock_timestamp();
      with gone as (
        delete from rate_limit_hits
        where api_key_id = p_api_key_id and hit_at <= v_now - interval '60 seconds'
        returning 1
      ) select count(*) into v_expired from gone;
      v_count := v_count - v_expired;
      allowed := v_count < p_limit;
      if allowed then
        insert into rate_limit_hits (api_key_id, hit_at) values (p_api_key_id, v_now);
        v_count := v_count + 1;
      end if;
      update rate_limit_windows set hits_in_window = v_count where api_key_id = p_api_key_id;
      remaining := greatest(p_limit - v_count, 0);
      select min(hit_at) into v_oldest from rate_limit_hits where api_key_id = p_api_key_id;
      reset_ms := coalesce(ceil(extract(epoch from (v_oldest + interval '60 seconds' - v_now)) * 1000), 0);
    end
    $$;
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    drop function if exists take_rate_limit_token(uuid, integer);
    drop table if exists rate_limit_hits, rate_limit_windows, venue_grants, resource_parts, resources,
      venues, api_keys, partners;
  `);
}
