/**
 * Grants that ended: which partner once held which venue. `revoke` deletes the grant (every check
 * of access reads `venue_grants` alone, so access ends at once), and with it went the only record
 * that the partner ever saw that venue's events; a partner whose last pulled event was of a venue
 * revoked since could then no longer resume `GET /events` from it (`400` on `starting_after`). A
 * cursor of such a venue is a place in the pull's order, and names nothing the partner did not
 * see: it stays a place to resume from, and still lists only the venues granted now.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    create table ended_venue_grants (
      partner_id uuid not null references partners (id) on delete cascade,
      venue_id uuid not null references venues (id) on delete cascade,
      granted_at timestamptz not null,
      ended_at timestamptz not null default now(),
      primary key (partner_id, venue_id)
    );
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop table ended_venue_grants');
}
