/** Reads of the purchases one sold; allowed after a grant is withdrawn (CONTRACT.md). */
import type { Knex } from '../../db/postgres/knex.ts';
import * as purchases from '../../db/queries/package-purchases.ts';
import { PurchaseNotFoundError } from '../errors.ts';

/** One purchase the caller sold: 404 when missing or sold by another partner. */
export async function getPurchase(
  db: Knex,
  partnerId: string,
  purchaseId: string,
): Promise<purchases.PurchaseRow> {
  const purchase = await purchases.findOwn(db, partnerId, purchaseId);
  if (!purchase) throw new PurchaseNotFoundError();
  return purchase;
}

/** The caller's purchases for a customer at a venue that can still pay, soonest expiry first. */
export function listActivePurchases(
  db: Knex,
  partnerId: string,
  venueId: string,
  customerPhone: string,
): Promise<purchases.PurchaseRow[]> {
  return purchases.listActive(db, partnerId, venueId, customerPhone);
}
