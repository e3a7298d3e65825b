/** Hold groups: several windows at one venue held all or nothing, then confirmed or released as one. */
import {
  DoubleBookingAttemptError,
  HoldExpiredError,
  HoldGroupNotFoundError,
  IdempotencyKeyMismatchError,
  InvalidHoldStateError,
  ItemsInConflictError,
  ItemsRejectedError,
  ItemsTakenError,
  NotOwnerError,
  VenueNotAuthorizedError,
} from '../errors.ts';
import { presented } from '../idempotency.ts';
import { presentConfirmedHoldGroup, presentHoldGroup } from '../presenters/hold-group.ts';
import { defineRoute } from '../route.ts';
import {
  ConfirmHoldGroupBody,
  CreateHoldGroupBody,
  HoldGroupConfirmResponse,
  HoldGroupParams,
  HoldGroupResponse,
} from '../schemas/hold-groups.ts';
import { ReasonBody } from '../schemas/shared.ts';
import { confirmHoldGroup } from '../use-cases/confirm-hold-group.ts';
import { createHoldGroup } from '../use-cases/create-hold-group.ts';
import { getHoldGroup } from '../use-cases/read-hold-groups.ts';
import { releaseHoldGroup } from '../use-cases/release-hold-group.ts';

const tag = 'Hold groups';
const holdGroupId = '6a1f0c3e-2b4d-4e8f-9a7c-1d3e5f7a9b2c';
const venueId = '3f1c2a9e-8d7b-4c55-9a0e-2b6f4d8e1a73';
const courts = ['9b2d7c1e-4f3a-4e8b-b1c6-5d0a7e9f2c48', '2c8e4a6f-1b3d-4f5a-9c7e-0d2f4b6a8c1e'];
const holdIds = ['7c9e6679-7425-40de-944b-e07fc1f90ae7', '0e4b2d6f-8a1c-4e3b-9d5f-7a9c1e3b5d7f'];
const slotIds = ['5b1f3c7e-2d4a-5e8b-9c1d-7f2a4b6c8d0e', '8d3f5b7a-9c1e-5a2d-8f4b-6c8e0a2d4f6b'];
const groupExample = (status: string, holdStatus: string, bookingIds: (string | null)[]) => ({
  hold_group_id: holdGroupId,
  venue_id: venueId,
  series_id: null,
  status,
  hold_expiry_at: '2026-11-22T10:45:00.000Z',
  price_rupees: 1000,
  created_at: '2026-11-22T10:35:00.000Z',
  holds: [0, 1].map((i) => ({
    item_index: i,
    hold_id: holdIds[i],
    slot_id: slotIds[i],
    resource_id: courts[i],
    slot_start: '2026-11-23T00:30:00.000Z',
    slot_end: '2026-11-23T01:30:00.000Z',
    price_rupees: 500,
    status: holdStatus,
    booking_id: bookingIds[i],
  })),
});
const access = [NotOwnerError, HoldGroupNotFoundError];

export const holdGroupRoutes = [
  defineRoute({
    method: 'POST',
    path: '/bookings/hold-groups',
    operationId: 'createHoldGroup',
    summary: 'Hold several windows at once, all or nothing',
    description:
      'Holds 1 to 8 windows at one venue in one transaction, until one `hold_expiry_at`; confirm or release ' +
      'them together. Each item is judged on its own, and when any fails nothing is held: `details` names ' +
      'every failing item (`items.i`) with its `reason`. The status follows the reasons: 400 SLOT_NOT_AVAILABLE ' +
      'when some item breaks the venue rules (UNKNOWN_RESOURCE, NOT_ON_GRID, IN_PAST, BEYOND_BOOKING_WINDOW, ' +
      'CLOSED, LEAD_TIME, BLACKOUT), else 409 SLOT_NOT_AVAILABLE when some window is TAKEN, else 409 ' +
      'TRANSFORMATION_CONFLICT. Items that overlap each other are 400 VALIDATION_ERROR. The same key with the ' +
      'same body replays the group with 201; with any other request it is 409 IDEMPOTENCY_KEY_MISMATCH. The ' +
      'call counts one request against the rate limit, whatever the number of items.',
    tag,
    auth: true,
    body: CreateHoldGroupBody,
    bodyExample: {
      venue_id: venueId,
      items: courts.map((resource_id) => ({
        resource_id,
        slot_start: '2026-11-23T00:30:00.000Z',
        slot_duration_minutes: 60,
      })),
      customer_phone: '9812345678',
      idempotency_key: 'group-7f3a',
    },
    responses: {
      201: {
        description: 'The group, every item held (or, for a repeated key and body, the original group).',
        schema: HoldGroupResponse,
        example: groupExample('ACTIVE', 'ACTIVE', [null, null]),
      },
    },
    errors: [
      ItemsRejectedError,
      VenueNotAuthorizedError,
      ItemsTakenError,
      ItemsInConflictError,
      IdempotencyKeyMismatchError,
    ],
    async handler({ partnerId, body, sent }, deps) {
      const group = await createHoldGroup(deps, partnerId, body, sent);
      return { status: 201, body: presented(group, presentHoldGroup) };
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/bookings/hold-groups/{holdGroupId}',
    operationId: 'getHoldGroup',
    summary: 'Get one of your hold groups',
    description:
      'The group as it is now: an ACTIVE group reads EXPIRED from `hold_expiry_at` on; after the confirm, each ' +
      "hold shows its booking's status. Readable after the venue grant is withdrawn.",
    tag,
    auth: true,
    params: HoldGroupParams,
    responses: {
      200: {
        description: 'The group.',
        schema: HoldGroupResponse,
        example: groupExample('CONFIRMED', 'BOOKED', [
          '1f0e3d2c-4b5a-4c6d-8e7f-9a0b1c2d3e4f',
          '4a6c8e0b-2d4f-4a6c-8e0b-2d4f6a8c0e2b',
        ]),
      },
    },
    errors: access,
    async handler({ partnerId, params }, { db }) {
      return { status: 200, body: presentHoldGroup(await getHoldGroup(db, partnerId, params.holdGroupId)) };
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/bookings/hold-groups/{holdGroupId}/confirm',
    operationId: 'confirmHoldGroup',
    summary: 'Confirm every hold of a group into bookings',
    description:
      'Call after taking payment: one set of customer details and one payment reference for the whole group. ' +
      'With `use_package_credit: true`, one credit per hold is taken, all or none (the purchase expiring ' +
      'first first); otherwise every booking is paid. 409 INVALID_HOLD_STATE for a CONFIRMED or CANCELLED ' +
      'group, 409 HOLD_EXPIRED for an expired one. The same key with the same request replays the confirm ' +
      'with 201; with any other request it is 409 IDEMPOTENCY_KEY_MISMATCH.',
    tag,
    auth: true,
    params: HoldGroupParams,
    body: ConfirmHoldGroupBody,
    bodyExample: {
      payment_reference: 'upi-000124',
      customer_name: 'Asha Rao',
      customer_phone: '9812345678',
      customer_email: 'asha@example.com',
      use_package_credit: false,
      idempotency_key: 'group-confirm-7f3a',
    },
    responses: {
      201: {
        description: 'Every hold booked, in item order.',
        schema: HoldGroupConfirmResponse,
        example: {
          hold_group_id: holdGroupId,
          status: 'CONFIRMED',
          price_rupees: 1000,
          package_credits_consumed: 0,
          bookings: [0, 1].map((i) => ({
            item_index: i,
            booking_id: ['1f0e3d2c-4b5a-4c6d-8e7f-9a0b1c2d3e4f', '4a6c8e0b-2d4f-4a6c-8e0b-2d4f6a8c0e2b'][i],
            hold_id: holdIds[i],
            slot_id: slotIds[i],
            status: 'BOOKED',
            booked_at: '2026-11-22T10:40:00.000Z',
            price_rupees: 500,
            payment_method: null,
            package_purchase_id: null,
          })),
        },
      },
    },
    errors: [
      ...access,
      VenueNotAuthorizedError,
      InvalidHoldStateError,
      HoldExpiredError,
      DoubleBookingAttemptError,
      IdempotencyKeyMismatchError,
    ],
    async handler({ partnerId, params, body, sent }, deps) {
      const confirmed = await confirmHoldGroup(deps, partnerId, params.holdGroupId, body, sent);
      return { status: 201, body: presented(confirmed, presentConfirmedHoldGroup) };
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/bookings/hold-groups/{holdGroupId}/cancel',
    operationId: 'releaseHoldGroup',
    summary: 'Release every hold of a group',
    description:
      'Frees every window of an ACTIVE group before its expiry, in one transaction. 409 INVALID_HOLD_STATE for ' +
      'a CONFIRMED or CANCELLED group, 409 HOLD_EXPIRED for an expired one. The same key with the same request ' +
      'answers 200 again.',
    tag,
    auth: true,
    params: HoldGroupParams,
    body: ReasonBody,
    bodyExample: { idempotency_key: 'group-release-7f3a', reason: 'customer changed plans' },
    responses: {
      200: {
        description: 'Released: the group and every hold CANCELLED.',
        schema: HoldGroupResponse,
        example: groupExample('CANCELLED', 'CANCELLED', [null, null]),
      },
    },
    errors: [
      ...access,
      VenueNotAuthorizedError,
      InvalidHoldStateError,
      HoldExpiredError,
      IdempotencyKeyMismatchError,
    ],
    async handler({ partnerId, params, body, sent }, deps) {
      const released = await releaseHoldGroup(deps, partnerId, params.holdGroupId, body, sent);
      return { status: 200, body: presented(released, presentHoldGroup) };
    },
  }),
];
