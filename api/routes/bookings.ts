/** Bookings: confirm a hold, read bookings, cancel and refund. */
import {
  BookingNotFoundError,
  DoubleBookingAttemptError,
  HoldExpiredError,
  HoldInGroupError,
  HoldNotFoundError,
  IdempotencyKeyMismatchError,
  InvalidHoldStateError,
  NotOwnerError,
  VenueNotAuthorizedError,
} from '../errors.ts';
import {
  presentBookingChange,
  presentBookingDetail,
  presentBookingListItem,
  presentConfirmed,
} from '../presenters/booking.ts';
import { defineRoute } from '../route.ts';
import { cancelBooking, refundBooking } from '../use-cases/change-booking.ts';
import { confirmBooking } from '../use-cases/confirm-booking.ts';
import { getBooking, listBookings } from '../use-cases/read-bookings.ts';
import {
  BookingChangeResponse,
  BookingDetail,
  BookingListQuery,
  BookingListResponse,
  BookingParams,
  ConfirmBody,
  ConfirmResponse,
} from '../schemas/bookings.ts';
import { ReasonBody } from '../schemas/shared.ts';
import { presented } from '../idempotency.ts';

const tag = 'Bookings';
const bookingId = '1f0e3d2c-4b5a-4c6d-8e7f-9a0b1c2d3e4f';
const detailExample = {
  booking_id: bookingId,
  hold_id: '7c9e6679-7425-40de-944b-e07fc1f90ae7',
  slot_id: '5b1f3c7e-2d4a-5e8b-9c1d-7f2a4b6c8d0e',
  venue_id: '3f1c2a9e-8d7b-4c55-9a0e-2b6f4d8e1a73',
  partner_id: '0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d',
  resource_id: '9b2d7c1e-4f3a-4e8b-b1c6-5d0a7e9f2c48',
  slot_start: '2026-11-23T00:30:00.000Z',
  slot_end: '2026-11-23T01:30:00.000Z',
  status: 'BOOKED',
  booked_at: '2026-11-22T10:32:10.000Z',
  price_rupees: 500,
  customer_name: 'Asha Rao',
  customer_phone: '+919812345678',
  payment_method: null,
  package_purchase_id: null,
  hold_group_id: null,
  series_id: null,
  payment_reference: 'upi-2026-000123',
  customer_email: null,
  cancelled_at: null,
  refunded_at: null,
};
const {
  payment_reference: _r,
  customer_email: _e,
  cancelled_at: _c,
  refunded_at: _f,
  ...listItemExample
} = detailExample;
const ownership = [NotOwnerError, VenueNotAuthorizedError, BookingNotFoundError];

export const bookingRoutes = [
  defineRoute({
    method: 'POST',
    path: '/bookings/confirm',
    operationId: 'confirmBooking',
    summary: 'Confirm a hold into a booking',
    description:
      'Call after taking payment; `payment_reference` is stored, not verified. Ownership is checked before ' +
      'venue authorisation. The same key with the same request returns the original booking; with a ' +
      'different request it is 409 IDEMPOTENCY_KEY_MISMATCH. A hold of a hold group is confirmed only with ' +
      'its group: 409 HOLD_IN_GROUP.',
    tag,
    auth: true,
    body: ConfirmBody,
    bodyExample: {
      hold_id: '7c2e4a6b-8d0f-4e1a-b3c5-d7e9f1a3b5c7',
      payment_reference: 'upi-000123',
      customer_name: 'Asha Rao',
      customer_phone: '9812345678',
      customer_email: 'asha@example.com',
      idempotency_key: 'confirm-7f3a',
    },
    responses: {
      201: {
        description: 'The booking.',
        schema: ConfirmResponse,
        example: {
          booking_id: bookingId,
          slot_id: detailExample.slot_id,
          status: 'BOOKED',
          booked_at: detailExample.booked_at,
          price_rupees: 500,
        },
      },
    },
    errors: [
      NotOwnerError,
      VenueNotAuthorizedError,
      HoldNotFoundError,
      HoldExpiredError,
      InvalidHoldStateError,
      DoubleBookingAttemptError,
      HoldInGroupError,
      IdempotencyKeyMismatchError,
    ],
    async handler({ partnerId, body }, deps) {
      return { status: 201, body: presented(await confirmBooking(deps, partnerId, body), presentConfirmed) };
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/bookings',
    operationId: 'listBookings',
    summary: 'List your bookings',
    description:
      'Only your own bookings, newest `booked_at` first. `from` and `to` filter on the venue-local date of ' +
      'the slot, inclusive; `customer_name` matches a case-insensitive substring; `series_id` keeps the ' +
      'bookings of one of your series; `limit` defaults to 50. ' +
      'Page with `starting_after` (the last `booking_id` of a page) while `has_more` is true.',
    tag,
    auth: true,
    query: BookingListQuery,
    responses: {
      200: {
        description: 'The bookings.',
        schema: BookingListResponse,
        example: { bookings: [listItemExample], has_more: false },
      },
    },
    async handler({ partnerId, query }, { db }) {
      const { rows, hasMore } = await listBookings(db, partnerId, {
        venueId: query.venue_id,
        from: query.from,
        to: query.to,
        customerPhone: query.customer_phone,
        customerName: query.customer_name,
        seriesId: query.series_id,
        startingAfter: query.starting_after,
        limit: query.limit,
      });
      return { status: 200, body: { bookings: rows.map(presentBookingListItem), has_more: hasMore } };
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/bookings/{bookingId}',
    operationId: 'getBooking',
    summary: 'Get one of your bookings',
    description: 'The BookingDetail fields at the top level. Readable after the venue grant is withdrawn.',
    tag,
    auth: true,
    params: BookingParams,
    responses: { 200: { description: 'The booking.', schema: BookingDetail, example: detailExample } },
    errors: [NotOwnerError, BookingNotFoundError],
    async handler({ partnerId, params }, { db }) {
      return { status: 200, body: presentBookingDetail(await getBooking(db, partnerId, params.bookingId)) };
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/bookings/{bookingId}/cancel',
    operationId: 'cancelBooking',
    summary: 'Cancel a booking',
    description: 'BOOKED → CANCELLED; the slot is freed. A retry with the same key answers 200 again.',
    tag,
    auth: true,
    params: BookingParams,
    body: ReasonBody,
    bodyExample: { idempotency_key: 'cancel-7f3a', reason: 'rain' },
    responses: {
      200: {
        description: 'Cancelled.',
        schema: BookingChangeResponse,
        example: { message: 'Booking cancelled.', booking_id: bookingId, status: 'CANCELLED' },
      },
    },
    errors: [...ownership, InvalidHoldStateError, IdempotencyKeyMismatchError],
    async handler({ partnerId, params, body }, deps) {
      const cancelled = await cancelBooking(deps, partnerId, params.bookingId, body);
      return { status: 200, body: presented(cancelled, presentBookingChange) };
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/bookings/{bookingId}/refund',
    operationId: 'refundBooking',
    summary: 'Mark a booking refunded',
    description:
      'BOOKED → REFUNDED (the slot is freed) or CANCELLED → REFUNDED. No money moves. A retry with the same ' +
      'key answers 200 again; a key used to cancel is 409 IDEMPOTENCY_KEY_MISMATCH.',
    tag,
    auth: true,
    params: BookingParams,
    body: ReasonBody,
    bodyExample: { idempotency_key: 'refund-7f3a' },
    responses: {
      200: {
        description: 'Refunded.',
        schema: BookingChangeResponse,
        example: { message: 'Booking refunded.', booking_id: bookingId, status: 'REFUNDED' },
      },
    },
    errors: [...ownership, InvalidHoldStateError, IdempotencyKeyMismatchError],
    async handler({ partnerId, params, body }, deps) {
      const refunded = await refundBooking(deps, partnerId, params.bookingId, body);
      return { status: 200, body: presented(refunded, presentBookingChange) };
    },
  }),
];
