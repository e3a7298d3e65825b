/**
 * The package catalogue: prepaid credit bundles a venue sells. Purchases and credit use come with
 * the packages feature; the catalogue exists from the start because the demo data includes one.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    create table packages (
      id uuid primary key default gen_random_uuid(),
      venue_id uuid not null references venues (id) on delete cascade,
      name text not null check (length(name) between 1 and 200),
      credits integer not null check (credits between 1 and 1000),
      price_rupees integer not null check (price_rupees between 0 and 10000000),
      valid_days integer not null check (valid_days between 1 and 3660),
      created_at timestamptz not null default now()
    );
    create index packages_venue_idx on packages (venue_id);
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop table if exists packages');
}
