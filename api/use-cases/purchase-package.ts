/**
 * POST /packages/{packageId}/purchase in one transaction: idempotency (the same key and request
 * replay the original purchase and add no credits; another customer, package or payment method is
 * 409), the package (404), its venue granted to the caller (403), then the purchase.
 */
import type { Knex } from '../../db/postgres/knex.ts';
import { transaction } from '../../db/postgres/transaction.ts';
import * as purchases from '../../db/queries/package-purchases.ts';
import * as packages from '../../db/queries/packages.ts';
import { PackageNotFoundError, VenueNotAuthorizedError } from '../errors.ts';
import { withIdempotency, type WriteOutcome } from '../idempotency.ts';

/** A purchase as the partner asked for it (the phone already in +91XXXXXXXXXX form). */
export interface PurchaseRequest {
  customer_phone: string;
  payment_method: purchases.PaymentMethod;
  idempotency_key: string;
}

/**
 * Sells the package to the customer, or replays the purchase made with the same key: the purchase
 * as it was made (idempotency.ts).
 */
export function purchasePackage(
  db: Knex,
  partnerId: string,
  packageId: string,
  input: PurchaseRequest,
): Promise<WriteOutcome<purchases.PurchaseRow>> {
  const { idempotency_key: key, ...fields } = input;
  const write = {
    partnerId,
    key,
    operation: 'package_purchase' as const,
    request: { packageId, ...fields },
  };
  return transaction(db, (trx) =>
    withIdempotency(
      trx,
      write,
      async () => {
        const pkg = await packages.findForPartner(trx, packageId, partnerId);
        if (!pkg) throw new PackageNotFoundError();
        if (!pkg.venue_authorized) throw new VenueNotAuthorizedError();
        return purchases.insert(trx, {
          packageId,
          partnerId,
          customerPhone: input.customer_phone,
          paymentMethod: input.payment_method,
        });
      },
      purchases.purchaseFromJson,
    ),
  );
}
