/**
 * Queries on `package_purchases`: credits a customer bought through a partner at a venue. A credit
 * is taken and returned by conditional updates under the row lock, so concurrent confirms and
 * cancels never take more than was bought nor return more than was taken.
 */
import type { Knex } from '../postgres/knex.ts';
import { datesIn } from './database-write.ts';

export const PAYMENT_METHODS = ['cash', 'upi', 'card', 'other'] as const;
export type PaymentMethod = (typeof PAYMENT_METHODS)[number];

/** A row of `package_purchases`. */
export interface PurchaseRow {
  id: string;
  package_id: string;
  venue_id: string;
  partner_id: string;
  customer_phone: string;
  payment_method: PaymentMethod;
  price_rupees: number;
  credits_total: number;
  credits_remaining: number;
  purchased_at: Date;
  expires_at: Date;
}

/** A purchase row from its JSON: timestamps become Dates, as the driver makes them. */
export function purchaseFromJson(json: Record<string, unknown>): PurchaseRow {
  return datesIn(json, ['purchased_at', 'expires_at']) as unknown as PurchaseRow;
}

/** A new purchase of a catalogue package; credits, price, venue and validity come from the package. */
export interface NewPurchase {
  packageId: string;
  partnerId: string;
  customerPhone: string;
  paymentMethod: PaymentMethod;
}

/** Records a purchase of the package with all its credits, valid from now for its `valid_days`. */
export async function insert(trx: Knex, purchase: NewPurchase): Promise<PurchaseRow> {
  const { rows } = await trx.raw<{ rows: PurchaseRow[] }>(
    `insert into package_purchases (package_id, venue_id, partner_id, customer_phone, payment_method,
                                    price_rupees, credits_total, credits_remaining, expires_at)
     select p.id, p.venue_id, ?, ?, ?, p.price_rupees, p.credits, p.credits, now() + make_interval(days => p.valid_days)
       from packages p where p.id = ?
     returning *`,
    [purchase.partnerId, purchase.customerPhone, purchase.paymentMethod, purchase.packageId],
  );
  return rows[0]!;
}

/** One of the partner's purchases. */
export function findOwn(db: Knex, partnerId: string, id: string): Promise<PurchaseRow | undefined> {
  return db<PurchaseRow>('package_purchases').where({ id, partner_id: partnerId }).first();
}

/** The partner's purchases for a customer at a venue with credits left and not expired, soonest expiry first. */
export function listActive(
  db: Knex,
  partnerId: string,
  venueId: string,
  customerPhone: string,
): Promise<PurchaseRow[]> {
  return db<PurchaseRow>('package_purchases')
    .where({ partner_id: partnerId, venue_id: venueId, customer_phone: customerPhone })
    .where('credits_remaining', '>', 0)
    .where('expires_at', '>', db.fn.now())
    .orderBy([{ column: 'expires_at' }, { column: 'id' }]);
}

/** Gives back one credit to a purchase that has not expired; true if it was given back. */
export async function returnCredit(trx: Knex, id: string): Promise<boolean> {
  const changed = await trx('package_purchases')
    .where({ id })
    .where('expires_at', '>', trx.fn.now())
    .whereRaw('credits_remaining < credits_total')
    .increment('credits_remaining', 1);
  return changed > 0;
}
