/** Queries on `packages`, the catalogue of prepaid credit bundles. */
import { insertReturningId, type Knex } from '../postgres/knex.ts';

/** The operator-set fields of a new package. */
export interface NewPackage {
  venueId: string;
  name: string;
  credits: number;
  priceRupees: number;
  validDays: number;
}

/** Adds a package to a venue's catalogue and returns its id. */
export async function insert(db: Knex, pkg: NewPackage): Promise<string> {
  return insertReturningId(db, 'packages', {
    venue_id: pkg.venueId,
    name: pkg.name,
    credits: pkg.credits,
    price_rupees: pkg.priceRupees,
    valid_days: pkg.validDays,
  });
}

/** A catalogue package with whether its venue is granted to `partnerId` (and not archived). */
export async function findForPartner(
  db: Knex,
  id: string,
  partnerId: string,
): Promise<{ id: string; venue_id: string; venue_authorized: boolean } | undefined> {
  const { rows } = await db.raw<{ rows: { id: string; venue_id: string; venue_authorized: boolean }[] }>(
    'select id, venue_id, venue_authorized(?, venue_id) as venue_authorized from packages where id = ?',
    [partnerId, id],
  );
  return rows[0];
}
