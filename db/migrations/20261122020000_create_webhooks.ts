/**
 * Webhooks: partners' subscriptions, one delivery per (event, subscription), and every attempt
 * of a delivery. Attempt history lives here, not in pg-boss: pg-boss only schedules the next try.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    create table webhook_subscriptions (
      id uuid primary key default gen_random_uuid(),
      partner_id uuid not null references partners (id) on delete cascade,
      endpoint_url text not null,
      event_types text[] not null check (cardinality(event_types) > 0),
      -- Kept in the clear because every delivery is signed with it; shown to the partner only on
      -- create and rotate, and never logged.
      secret_key text not null,
      is_active boolean not null default true,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now()
    );
    create index webhook_subscriptions_partner_idx on webhook_subscriptions (partner_id);

    -- status: pending (queued or being attempted), failed (an attempt failed; the next is
    -- scheduled), delivered, dead_letter (the fifth attempt failed; only a redelivery restarts it).
    create table webhook_deliveries (
      id uuid primary key default gen_random_uuid(),
      event_id uuid not null references events (id),
      subscription_id uuid not null references webhook_subscriptions (id) on delete cascade,
      partner_id uuid not null,
      status text not null default 'pending' check (status in ('pending', 'failed', 'delivered', 'dead_letter')),
      attempts integer not null default 0,
      last_attempt_id uuid,
      last_status_code integer,
      last_error text,
      next_attempt_at timestamptz,
      created_at timestamptz not null default now(),
      last_attempt_at timestamptz,
      delivered_at timestamptz,
      unique (event_id, subscription_id)
    );
    create index webhook_deliveries_partner_status_idx on webhook_deliveries (partner_id, status);

    -- One row per attempt; its id is the delivery_id the partner sees (X-Delivery-Id).
    create table webhook_attempts (
      id uuid primary key,
      delivery_id uuid not null references webhook_deliveries (id) on delete cascade,
      attempt integer not null,
      status_code integer,
      error text,
      started_at timestamptz not null,
      finished_at timestamptz
    );
    create index webhook_attempts_delivery_idx on webhook_attempts (delivery_id);
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop table if exists webhook_attempts, webhook_deliveries, webhook_subscriptions');
}
