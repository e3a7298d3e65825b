/** Queries on `venue_grants`: which partner may see and book which venue. */
import type { Knex } from '../postgres/knex.ts';

/** Grants a venue to a partner (a repeat is a no-op). */
export async function grant(db: Knex, partnerId: string, venueId: string): Promise<void> {
  await db('venue_grants').insert({ partner_id: partnerId, venue_id: venueId }).onConflict().ignore();
}

/**
 * Withdraws a grant (a missing grant is a no-op), remembering that it was held
 * (`ended_venue_grants`: the partner's event cursors of that venue stay places to resume from).
 */
export async function revoke(db: Knex, partnerId: string, venueId: string): Promise<void> {
  await db.raw(
    `with ended as (delete from venue_grants where partner_id = ? and venue_id = ? returning *)
     insert into ended_venue_grants (partner_id, venue_id, granted_at)
     select partner_id, venue_id, created_at from ended
     on conflict (partner_id, venue_id) do update set granted_at = excluded.granted_at, ended_at = now()`,
    [partnerId, venueId],
  );
}
