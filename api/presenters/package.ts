/** Package purchases as the API shows them. */
import type { PurchaseRow } from '../../db/queries/package-purchases.ts';
import type { PackagePurchase } from '../schemas/packages.ts';

export function presentPurchase(p: PurchaseRow): PackagePurchase {
  return {
    id: p.id,
    package_id: p.package_id,
    customer_phone: p.customer_phone,
    partner_id: p.partner_id,
    credits_remaining: p.credits_remaining,
    payment_method: p.payment_method,
    purchased_at: p.purchased_at.toISOString(),
    expires_at: p.expires_at.toISOString(),
    venue_id: p.venue_id,
    credits_total: p.credits_total,
  };
}
