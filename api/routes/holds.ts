/** Holds: place one (the mutual-exclusion gate) and release one. */
import {
  HoldExpiredError,
  HoldInGroupError,
  HoldNotFoundError,
  IdempotencyKeyMismatchError,
  InvalidHoldStateError,
  NotOwnerError,
  SlotRejectedError,
  SlotTakenError,
  TransformationConflictError,
  VenueNotAuthorizedError,
} from '../errors.ts';
import { presentHold, presentHoldRelease } from '../presenters/booking.ts';
import { defineRoute } from '../route.ts';
import { createHold } from '../use-cases/create-hold.ts';
import { releaseHold } from '../use-cases/release-hold.ts';
import { ReasonBody } from '../schemas/shared.ts';
import { CancelHoldResponse, CreateHoldBody, HoldParams, HoldResponse } from '../schemas/holds.ts';
import { presented } from '../idempotency.ts';

const tag = 'Holds';

export const holdRoutes = [
  defineRoute({
    method: 'POST',
    path: '/bookings/hold',
    operationId: 'createHold',
    summary: 'Hold a slot',
    description:
      'Reserves the window until `hold_expiry_at`; confirm it after taking payment. The same idempotency_key ' +
      'always returns the original hold with 201, even for a different body. 409 SLOT_NOT_AVAILABLE when the ' +
      'window is held or booked; 409 TRANSFORMATION_CONFLICT when a convertible sibling (the whole, or a part) ' +
      'is reserved; 400 SLOT_NOT_AVAILABLE when the venue rules refuse the slot.',
    tag,
    auth: true,
    body: CreateHoldBody,
    bodyExample: {
      venue_id: '3f1c2a9e-8d7b-4c55-9a0e-2b6f4d8e1a73',
      resource_id: '9b2d7c1e-4f3a-4e8b-b1c6-5d0a7e9f2c48',
      slot_start: '2026-11-23T00:30:00.000Z',
      slot_duration_minutes: 60,
      customer_phone: '9812345678',
      idempotency_key: 'hold-7f3a',
    },
    responses: {
      201: {
        description: 'The hold (or, for a repeated key, the original hold).',
        schema: HoldResponse,
        example: {
          hold_id: '7c9e6679-7425-40de-944b-e07fc1f90ae7',
          slot_id: '5b1f3c7e-2d4a-5e8b-9c1d-7f2a4b6c8d0e',
          status: 'ACTIVE',
          hold_expiry_at: '2026-11-22T10:45:00.000Z',
          price_rupees: 500,
        },
      },
    },
    errors: [
      SlotRejectedError,
      VenueNotAuthorizedError,
      SlotTakenError,
      TransformationConflictError,
      IdempotencyKeyMismatchError,
    ],
    async handler({ partnerId, body }, deps) {
      return { status: 201, body: presented(await createHold(deps, partnerId, body), presentHold) };
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/partner/holds/{holdId}/cancel',
    operationId: 'releaseHold',
    summary: 'Release a hold',
    description:
      'Frees the slot of an ACTIVE hold before its expiry. A retry with the same key answers 200 again. A hold ' +
      'of a hold group is released only with its group: 409 HOLD_IN_GROUP.',
    tag,
    auth: true,
    params: HoldParams,
    body: ReasonBody,
    bodyExample: { idempotency_key: 'release-7f3a', reason: 'customer left' },
    responses: {
      200: {
        description: 'Released.',
        schema: CancelHoldResponse,
        example: {
          message: 'Hold released.',
          hold_id: '7c9e6679-7425-40de-944b-e07fc1f90ae7',
          status: 'CANCELLED',
        },
      },
    },
    errors: [
      NotOwnerError,
      VenueNotAuthorizedError,
      HoldNotFoundError,
      HoldExpiredError,
      InvalidHoldStateError,
      HoldInGroupError,
      IdempotencyKeyMismatchError,
    ],
    async handler({ partnerId, params, body }, deps) {
      const released = await releaseHold(deps, partnerId, params.holdId, body);
      return { status: 200, body: presented(released, presentHoldRelease) };
    },
  }),
];
