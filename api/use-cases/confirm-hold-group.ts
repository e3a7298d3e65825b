/**
 * POST /bookings/hold-groups/{holdGroupId}/confirm: one statement, `confirm_hold_group()`
 * (db/queries/hold-groups.ts), which locks the group and checks, in the contract's order, that it
 * exists, is the caller's, is at a venue still the caller's; claims the idempotency key; checks the
 * group's state, that every hold still has its reservations and that member-priced holds are
 * confirmed for their member; then takes package credits (one per hold, all or none) when asked and
 * writes every booking with its booking_created. A replay answers the stored result, so it never
 * takes credits twice.
 */
import type { Knex } from '../../db/postgres/knex.ts';
import { refusalOf, type Refusal } from '../../db/postgres/pg-errors.ts';
import { retryLostRaces } from '../../db/postgres/transaction.ts';
import * as holdGroups from '../../db/queries/hold-groups.ts';
import {
  DoubleBookingAttemptError,
  HoldExpiredError,
  HoldGroupNotFoundError,
  InvalidFieldError,
  InvalidHoldStateError,
  NotOwnerError,
  VenueNotAuthorizedError,
} from '../errors.ts';
import {
  databaseWriteOutcome,
  fingerprint,
  sentRequest,
  type IdempotentWrite,
  type WriteOutcome,
} from '../idempotency.ts';

/** A group's confirm, as the partner asked for it (phones already in +91XXXXXXXXXX form). */
export interface ConfirmHoldGroupRequest {
  payment_reference: string;
  customer_name: string;
  customer_phone: string;
  customer_email?: string | undefined;
  use_package_credit?: boolean | undefined;
  idempotency_key: string;
}

/**
 * Confirms every hold of the caller's group into a booking, or replays the confirm made with the
 * same key, group and body (`sent`, as the client sent it): either way the group as it was confirmed.
 */
export async function confirmHoldGroup(
  { db }: { db: Knex },
  partnerId: string,
  holdGroupId: string,
  input: ConfirmHoldGroupRequest,
  sent: unknown,
): Promise<WriteOutcome<holdGroups.ConfirmedHoldGroup>> {
  const key = input.idempotency_key;
  const write: IdempotentWrite = {
    partnerId,
    key,
    operation: 'hold_group_confirm',
    ...sentRequest(sent, input, { holdGroupId }),
  };
  const outcome = await retryLostRaces(async () => {
    try {
      return await holdGroups.confirm(db, {
        partnerId,
        idempotencyKey: key,
        fingerprint: fingerprint(write.request),
        groupId: holdGroupId,
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
  return databaseWriteOutcome(outcome, write, holdGroups.confirmedHoldGroupFromJson);
}

/** The API's error for a refusal of `confirm_hold_group()`. */
function confirmRefused({ reason, detail }: Refusal): Error {
  switch (reason) {
    case 'hold_group_not_found':
      return new HoldGroupNotFoundError();
    case 'not_owner':
      return new NotOwnerError('hold group');
    case 'venue_not_authorized':
      return new VenueNotAuthorizedError();
    case 'invalid_hold_state':
      return new InvalidHoldStateError(`The hold group is ${detail}; only an ACTIVE group can be confirmed.`);
    case 'hold_expired':
      return new HoldExpiredError('The hold group has expired; its windows are free again.');
    case 'double_booking':
      return new DoubleBookingAttemptError();
    case 'not_the_member':
      return new InvalidFieldError(
        'customer_phone',
        "must be the customer whose membership priced the group's holds (the group's customer_phone)",
      );
    default:
      return new Error(`confirm_hold_group refused for an unknown reason: ${reason}`);
  }
}
