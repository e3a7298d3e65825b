/**
 * POST /bookings/confirm: one statement, `confirm_hold()` (db/queries/bookings.ts), which claims
 * the idempotency key (same key and request → the original booking; another request → 409), locks
 * the hold and checks, in this order, that it exists, is the caller's, is at a venue still granted,
 * is not one of a hold group's (HOLD_IN_GROUP: a group is confirmed as one), has not expired, is
 * ACTIVE, still has its reservations, and that a member-priced hold is confirmed for its member;
 * then, when asked, takes one package credit (the caller's purchase for this customer and venue
 * that expires first, locked) and writes the booking and booking_created. A replay answers the
 * stored result, so it never takes a second credit.
 */
import type { Knex } from '../../db/postgres/knex.ts';
import { refusalOf, type Refusal } from '../../db/postgres/pg-errors.ts';
import { retryLostRaces } from '../../db/postgres/transaction.ts';
import * as bookings from '../../db/queries/bookings.ts';
import {
  DoubleBookingAttemptError,
  HoldExpiredError,
  HoldInGroupError,
  HoldNotFoundError,
  InvalidFieldError,
  InvalidHoldStateError,
  NotOwnerError,
  VenueNotAuthorizedError,
} from '../errors.ts';
import {
  databaseWriteOutcome,
  fingerprint,
  type IdempotentWrite,
  type WriteOutcome,
} from '../idempotency.ts';

/** A confirm, as the partner asked for it (phones already in +91XXXXXXXXXX form). */
export interface ConfirmRequest {
  hold_id: string;
  payment_reference: string;
  customer_name: string;
  customer_phone: string;
  customer_email?: string | undefined;
  idempotency_key: string;
  use_package_credit?: boolean | undefined;
}

/**
 * Confirms a hold into a booking, or replays the confirm made with the same key: either way the
 * confirm as it was made.
 */
export async function confirmBooking(
  { db }: { db: Knex },
  partnerId: string,
  input: ConfirmRequest,
): Promise<WriteOutcome<bookings.ConfirmedBooking>> {
  const { idempotency_key: key, ...request } = input;
  const write: IdempotentWrite = { partnerId, key, operation: 'confirm', request };
  const outcome = await retryLostRaces(async () => {
    try {
      return await bookings.confirm(db, {
        partnerId,
        idempotencyKey: key,
        fingerprint: fingerprint(request),
        holdId: input.hold_id,
        paymentReference: input.payment_reference,
        customerName: input.customer_name,
        customerPhone: input.customer_phone,
        customerEmail: input.customer_email ?? null,
        usePackageCredit: input.use_package_credit ?? null,
      });
    } catch (err) {
      const refusal = refusalOf(err);
      throw refusal ? confirmRefused(refusal) : err;
    }
  });
  return databaseWriteOutcome(outcome, write, bookings.confirmedBookingFromJson);
}

/** The API's error for a refusal of `confirm_hold()`. */
function confirmRefused({ reason, detail }: Refusal): Error {
  switch (reason) {
    case 'hold_not_found':
      return new HoldNotFoundError();
    case 'not_owner':
      return new NotOwnerError('hold');
    case 'venue_not_authorized':
      return new VenueNotAuthorizedError();
    case 'hold_in_group':
      return new HoldInGroupError(detail!);
    case 'hold_expired':
      return new HoldExpiredError();
    case 'invalid_hold_state':
      return new InvalidHoldStateError(`The hold is ${detail}; only an ACTIVE hold can be confirmed.`);
    case 'double_booking':
      return new DoubleBookingAttemptError();
    case 'not_the_member':
      // A member's price is for that member: confirming it for another customer would sell the
      // discount to anyone who knows one member's phone (CONTRACT.md, "Hardening answers").
      return new InvalidFieldError(
        'customer_phone',
        "must be the customer whose membership priced the hold (the hold's customer_phone)",
      );
    default:
      return new Error(`confirm_hold refused for an unknown reason: ${reason}`);
  }
}
