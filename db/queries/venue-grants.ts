/** Queries on `venue_grants`: which partner may see and book which venue. */
import type { Knex } from '../postgres/knex.ts';

/** Grants a venue to a partner (a repeat is a no-op). */
export async function grant(db: Knex, partnerId: string, venueId: string): Promise<void> {
  await db('venue_grants').insert({ partner_id: partnerId, venue_id: venueId }).onConflict().ignore();
}

/** Withdraws a grant (a missing grant is a no-op). */
export async function revoke(db: Knex, partnerId: string, venueId: string): Promise<void> {
  await db('venue_grants').where({ partner_id: partnerId, venue_id: venueId }).delete();
}
