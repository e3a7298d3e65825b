import { z } from 'zod';
import { Phone } from '../../db/rules/phone.ts';
import { PAYMENT_METHODS } from '../../db/queries/package-purchases.ts';
import { DateTime, IdempotencyKey, IgnoredPartnerId, Uuid } from './shared.ts';

export const PackageParams = z.object({ packageId: Uuid });
export const PurchaseParams = z.object({ purchaseId: Uuid });

export const PurchaseBody = z.object({
  customer_phone: Phone,
  payment_method: z.enum(PAYMENT_METHODS).meta({ description: 'How the customer paid you for the package.' }),
  idempotency_key: IdempotencyKey,
  partner_id: IgnoredPartnerId,
});
export type PurchaseBody = z.infer<typeof PurchaseBody>;

export const PackagePurchase = z
  .object({
    id: Uuid,
    package_id: Uuid,
    customer_phone: z.string(),
    partner_id: z.string(),
    credits_remaining: z.number().int(),
    payment_method: z.enum(PAYMENT_METHODS),
    purchased_at: DateTime,
    expires_at: DateTime,
    venue_id: Uuid.meta({ description: "The package's venue; credits pay for bookings there only." }),
    credits_total: z.number().int().meta({ description: 'Credits bought.' }),
  })
  .meta({ id: 'PackagePurchase' });
export type PackagePurchase = z.infer<typeof PackagePurchase>;

export const PurchaseResponse = z
  .object({ purchase: PackagePurchase })
  .meta({ id: 'PackagePurchaseResponse' });

export const ActivePurchasesQuery = z.object({
  customer_phone: Phone,
  venue_id: Uuid,
});

export const ActivePurchasesResponse = z
  .object({ data: z.array(PackagePurchase) })
  .meta({ id: 'ActivePackagePurchases' });
