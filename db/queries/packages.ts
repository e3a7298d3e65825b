/** Queries on `packages`, the catalogue of prepaid credit bundles. */
import { insertReturningId, type Knex } from '../knex.ts';

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
