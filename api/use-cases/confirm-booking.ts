/**
 * POST /bookings/confirm in one transaction: idempotency (same key and request → the original
 * booking; another request → 409), then the hold, locked: ownership before venue authorisation,
 * expiry, state, that its reservations are intact, and that a member-priced hold is confirmed for
 * its member; then, when asked, one package credit (the
 * caller's purchase for this customer and venue that expires first, locked); then the booking and
 * booking_created. A replay returns the stored answer, so it never takes a second credit.
 */
import type { PgBoss } from 'pg-boss';
import { recordEvents } from '../../db/rules/events.ts';
import type { Knex } from '../../db/postgres/knex.ts';
import { transaction } from '../../db/postgres/transaction.ts';
import * as bookings from '../../db/queries/bookings.ts';
import * as purchases from '../../db/queries/package-purchases.ts';
import {
  DoubleBookingAttemptError,
  HoldExpiredError,
  InvalidFieldError,
  InvalidHoldStateError,
} from '../errors.ts';
import { withIdempotency } from '../idempotency.ts';
import { lockOwnHold } from './own-records.ts';

/** A confirm, as the partner asked for it (phones already in +91XXXXXXXXXX form). */
export interface ConfirmRequest {
  hold_id: string;
  payment_reference: string;
  customer_name: string;
  customer_phone: string;
  customer_email?: string | undefined;
  idempotency_key: string;
  use_package_credit?: boolean | undefined;
  partner_id?: unknown;
}

/** What a confirm did: the booking, and whether a package credit paid (undefined: not asked). */
export interface Confirmed {
  booking: bookings.BookingRow;
  packageCreditConsumed: boolean | undefined;
}

/**
 * Confirms a hold into a booking, or replays the confirm made with the same key: the result as
 * `present` made it the first time (idempotency.ts).
 */
export async function confirmBooking<R>(
  { db, boss }: { db: Knex; boss: PgBoss },
  partnerId: string,
  input: ConfirmRequest,
  present: (confirmed: Confirmed) => R,
): Promise<R> {
  const { idempotency_key: key, partner_id: _ignored, ...request } = input;
  return transaction(db, (trx) =>
    withIdempotency(trx, { partnerId, key, operation: 'confirm', request }, async () => {
      const hold = await lockOwnHold(trx, partnerId, input.hold_id);
      if (hold.expired) throw new HoldExpiredError();
      if (hold.status !== 'ACTIVE') {
        throw new InvalidHoldStateError(`The hold is ${hold.status}; only an ACTIVE hold can be confirmed.`);
      }
      if (!hold.intact) throw new DoubleBookingAttemptError();
      // A member's price is for that member: confirming it for another customer would sell the
      // discount to anyone who knows one member's phone (CONTRACT.md, "Hardening answers").
      if (hold.discount_percent > 0 && input.customer_phone !== hold.customer_phone) {
        throw new InvalidFieldError(
          'customer_phone',
          "must be the customer whose membership priced the hold (the hold's customer_phone)",
        );
      }
      // Without a usable purchase the confirm goes on as a paid one (CONTRACT.md).
      const purchaseId = input.use_package_credit
        ? await purchases.takeCredit(trx, {
            partnerId,
            venueId: hold.venue_id,
            customerPhone: input.customer_phone,
          })
        : undefined;
      const booking = (await recordEvents(trx, boss, (events) =>
        bookings.confirmHold(trx, events, hold.id, {
          paymentReference: input.payment_reference,
          paymentMethod: purchaseId ? 'package' : null,
          packagePurchaseId: purchaseId ?? null,
          customerName: input.customer_name,
          customerPhone: input.customer_phone,
          customerEmail: input.customer_email ?? null,
        }),
      ))!;
      const asked = input.use_package_credit !== undefined;
      return present({ booking, packageCreditConsumed: asked ? purchaseId !== undefined : undefined });
    }),
  );
}
