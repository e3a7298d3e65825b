/** Packages: sell prepaid credits to a customer, and read what was sold. */
import {
  IdempotencyKeyMismatchError,
  PackageNotFoundError,
  PurchaseNotFoundError,
  VenueNotAuthorizedError,
} from '../errors.ts';
import { presentPurchase } from '../presenters/package.ts';
import { defineRoute } from '../route.ts';
import { purchasePackage } from '../use-cases/purchase-package.ts';
import { getPurchase, listActivePurchases } from '../use-cases/read-purchases.ts';
import {
  ActivePurchasesQuery,
  ActivePurchasesResponse,
  PackageParams,
  PurchaseBody,
  PurchaseParams,
  PurchaseResponse,
} from '../schemas/packages.ts';
import { presented } from '../idempotency.ts';

const tag = 'Packages';
const purchaseExample = {
  id: '2c4e6a8b-1d3f-4a5b-8c7d-9e0f1a2b3c4d',
  package_id: '6d8f0a2c-3e5b-4c7d-9e1f-2a3b4c5d6e7f',
  customer_phone: '+919812345678',
  partner_id: '0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d',
  credits_remaining: 10,
  payment_method: 'upi' as const,
  purchased_at: '2026-11-22T10:00:00.000Z',
  expires_at: '2027-02-20T10:00:00.000Z',
  venue_id: '3f1c2a9e-8d7b-4c55-9a0e-2b6f4d8e1a73',
  credits_total: 10,
};

export const packageRoutes = [
  defineRoute({
    method: 'POST',
    path: '/packages/{packageId}/purchase',
    operationId: 'purchasePackage',
    summary: 'Sell a package of prepaid credits',
    description:
      "Records that the customer bought the package (you took the payment). The purchase holds the package's " +
      'credits, valid for its number of days, at its venue, for bookings you confirm with ' +
      '`use_package_credit: true`. The same key with the same request returns the original purchase and adds ' +
      'no credits; with another customer, package or payment method it is 409 IDEMPOTENCY_KEY_MISMATCH.',
    tag,
    auth: true,
    params: PackageParams,
    body: PurchaseBody,
    bodyExample: { customer_phone: '9812345678', payment_method: 'upi', idempotency_key: 'package-41c2' },
    responses: {
      201: {
        description: 'The purchase (or, for a repeated key, the original purchase).',
        schema: PurchaseResponse,
        example: { purchase: purchaseExample },
      },
    },
    errors: [VenueNotAuthorizedError, PackageNotFoundError, IdempotencyKeyMismatchError],
    async handler({ partnerId, params, body }, { db }) {
      const sold = await purchasePackage(db, partnerId, params.packageId, body);
      return { status: 201, body: presented(sold, (purchase) => ({ purchase: presentPurchase(purchase) })) };
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/packages/purchases/{purchaseId}',
    operationId: 'getPackagePurchase',
    summary: 'Get a package purchase you sold',
    description:
      'With its credits remaining. Another partner’s purchase is 404 like a missing one. Readable after the ' +
      'venue grant is withdrawn.',
    tag,
    auth: true,
    params: PurchaseParams,
    responses: {
      200: { description: 'The purchase.', schema: PurchaseResponse, example: { purchase: purchaseExample } },
    },
    errors: [PurchaseNotFoundError],
    async handler({ partnerId, params }, { db }) {
      const purchase = await getPurchase(db, partnerId, params.purchaseId);
      return { status: 200, body: { purchase: presentPurchase(purchase) } };
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/packages/active',
    operationId: 'listActivePackagePurchases',
    summary: "A customer's usable packages at a venue",
    description:
      'The purchases you sold to this customer at this venue that have credits left and have not expired, ' +
      'soonest expiry first: the first is the one a confirm with `use_package_credit: true` takes a credit from.',
    tag,
    auth: true,
    query: ActivePurchasesQuery,
    responses: {
      200: {
        description: 'The usable purchases (possibly none).',
        schema: ActivePurchasesResponse,
        example: { data: [purchaseExample] },
      },
    },
    async handler({ partnerId, query }, { db }) {
      const rows = await listActivePurchases(db, partnerId, query.venue_id, query.customer_phone);
      return { status: 200, body: { data: rows.map(presentPurchase) } };
    },
  }),
];
