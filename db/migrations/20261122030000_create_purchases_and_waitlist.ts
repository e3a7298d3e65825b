/**
 * Package purchases (prepaid credits a customer bought through a partner) and waitlist entries,
 * with the record of which freed window promoted which entry.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    -- A purchase copies what it sold (venue, credits, price) so a later catalogue change never
    -- alters it. credits_remaining can neither go below zero nor above what was bought: a credit
    -- taken twice or returned twice is refused by the database, whatever the code does.
    create table package_purchases (
      id uuid primary key default gen_random_uuid(),
      package_id uuid not null references packages (id),
      venue_id uuid not null,
      partner_id uuid not null,
      customer_phone text not null,
      payment_method text not null check (payment_method in ('cash', 'upi', 'card', 'other')),
      price_rupees integer not null,
      credits_total integer not null,
      credits_remaining integer not null,
      purchased_at timestamptz not null default now(),
      expires_at timestamptz not null,
      check (credits_remaining between 0 and credits_total)
    );
    -- The credit lookup at confirm: the caller's purchases for a customer at a venue by expiry.
    create index package_purchases_owner_idx
      on package_purchases (partner_id, venue_id, customer_phone, expires_at);

    -- One entry per partner, venue, resource, venue-local date and customer: a repeated join finds
    -- the same row (the unique index makes parallel joins converge on it).
    create table waitlist_entries (
      id uuid primary key default gen_random_uuid(),
      partner_id uuid not null,
      venue_id uuid not null,
      resource_id uuid not null,
      slot_date date not null,
      customer_phone text not null,
      customer_name text,
      status text not null default 'waiting' check (status in ('waiting', 'promoted', 'expired', 'cancelled')),
      slot_id uuid,
      promoted_at timestamptz,
      expires_at timestamptz not null,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now(),
      unique (partner_id, venue_id, resource_id, slot_date, customer_phone)
    );
    -- The promotion queue of one resource and date, oldest first.
    create index waitlist_entries_queue_idx
      on waitlist_entries (venue_id, resource_id, slot_date, created_at, id) where status = 'waiting';

    -- A freed window (named by the event that freed it) promotes at most one entry, ever: the
    -- primary key makes a second run of its promotion job a no-op, even after the entry re-joined.
    create table waitlist_promotions (
      event_id uuid primary key,
      entry_id uuid not null references waitlist_entries (id),
      created_at timestamptz not null default now()
    );
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop table if exists waitlist_promotions, waitlist_entries, package_purchases');
}
