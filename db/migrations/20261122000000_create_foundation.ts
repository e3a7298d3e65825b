/**
 * The platform tables: partners and their API keys, venues with their booking rules, resources
 * (including convertible ones made of parts), venue grants, and the per-key rate-limit window.
 */
import type { Knex } from 'knex';

/**
 * The one-request rate-limit function as this migration makes it; migration 20261201000000 puts it
 * back in its down.
 */
export const TAKE_RATE_LIMIT_TOKEN = `
    -- Admits or refuses one request of a key, exactly: admitted when fewer than p_limit admitted
    -- requests lie in the 60 seconds before it. Refused requests are not recorded. Amortised O(1):
    -- each hit is inserted once and deleted once.
    create or replace function take_rate_limit_token(
      p_api_key_id uuid, p_limit integer,
      out allowed boolean, out remaining integer, out reset_ms bigint
    ) language plpgsql as $$
    declare
      v_head bigint;
      v_next bigint;
      v_now timestamptz;
      v_oldest timestamptz;
    begin
      select head_seq, next_seq into v_head, v_next from rate_limit_windows
        where api_key_id = p_api_key_id for update;
      if not found then
        insert into rate_limit_windows (api_key_id) values (p_api_key_id) on conflict do nothing;
        select head_seq, next_seq into v_head, v_next from rate_limit_windows
          where api_key_id = p_api_key_id for update;
      end if;
      -- Read the clock only once the lock is held, so hit times follow the order of admission.
      v_now := clock_timestamp();
      while v_head < v_next loop
        delete from rate_limit_hits
          where api_key_id = p_api_key_id and seq = v_head and hit_at <= v_now - interval '60 seconds';
        exit when not found;
        v_head := v_head + 1;
      end loop;
      allowed := v_next - v_head < p_limit;
      if allowed then
        insert into rate_limit_hits (api_key_id, seq, hit_at) values (p_api_key_id, v_next, v_now);
        v_next := v_next + 1;
      end if;
      update rate_limit_windows set head_seq = v_head, next_seq = v_next where api_key_id = p_api_key_id;
      remaining := greatest(p_limit - (v_next - v_head), 0);
      select hit_at into v_oldest from rate_limit_hits where api_key_id = p_api_key_id and seq = v_head;
      reset_ms := coalesce(ceil(extract(epoch from (v_oldest + interval '60 seconds' - v_now)) * 1000), 0);
    end
    $$;
`;

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
    -- The exact sliding window of one API key. Every admitted request of the last 60 seconds is a
    -- row of rate_limit_hits, numbered in admission order; rate_limit_windows holds the number of
    -- the oldest live hit (head_seq) and of the next one (next_seq), and its row is the lock that
    -- serialises the requests of one key across every web process. Every statement is a primary-
    -- key lookup, so the cost per request stays flat however large the window or the table.
    -- Both tables are UNLOGGED: the bookkeeping commits without waiting for a WAL flush, at the
    -- price that a database crash empties the windows (every key starts afresh). They have no
    -- foreign keys on purpose: each check would lock the api_keys row FOR KEY SHARE on every
    -- request, turning the hottest read of the service into a write. Keys are never deleted.
    create unlogged table rate_limit_windows (
      api_key_id uuid primary key,
      head_seq bigint not null default 0,
      next_seq bigint not null default 0
    );
    create unlogged table rate_limit_hits (
      api_key_id uuid not null,
      seq bigint not null,
      hit_at timestamptz not null,
      primary key (api_key_id, seq)
    );

${TAKE_RATE_LIMIT_TOKEN}  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    drop function if exists take_rate_limit_token(uuid, integer);
    drop table if exists rate_limit_hits, rate_limit_windows, venue_grants, resource_parts, resources,
      venues, api_keys, partners;
  `);
}
