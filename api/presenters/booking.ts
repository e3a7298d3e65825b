/** Holds and bookings as the API shows them. */
import type { BookingRow, ConfirmedBooking } from '../../db/queries/bookings.ts';
import type { HoldRow } from '../../db/queries/holds.ts';
import type {
  BookingChangeResponse,
  BookingDetail,
  BookingListItem,
  ConfirmResponse,
} from '../schemas/bookings.ts';
import type { CancelHoldResponse, HoldResponse } from '../schemas/holds.ts';

export function presentHold(hold: HoldRow): HoldResponse {
  return {
    hold_id: hold.id,
    slot_id: hold.slot_id,
    status: 'ACTIVE',
    hold_expiry_at: hold.hold_expiry_at.toISOString(),
    price_rupees: hold.price_rupees,
  };
}

/** A released hold, as POST /partner/holds/{holdId}/cancel answers. */
export function presentHoldRelease(hold: HoldRow): CancelHoldResponse {
  return { message: 'Hold released.', hold_id: hold.id, status: 'CANCELLED' };
}

/** A confirm's booking; package_credit_consumed only when the request asked to use a credit. */
export function presentConfirmed({ booking, package_credit_consumed }: ConfirmedBooking): ConfirmResponse {
  const body: ConfirmResponse = {
    booking_id: booking.id,
    slot_id: booking.slot_id,
    status: 'BOOKED',
    booked_at: booking.booked_at.toISOString(),
    price_rupees: booking.price_rupees,
  };
  if (package_credit_consumed != null) body.package_credit_consumed = package_credit_consumed;
  return body;
}

/** A cancelled or refunded booking, as cancel and refund answer. */
export function presentBookingChange(booking: BookingRow): BookingChangeResponse {
  const message = booking.status === 'REFUNDED' ? 'Booking refunded.' : 'Booking cancelled.';
  return { message, booking_id: booking.id, status: booking.status };
}

export function presentBookingListItem(b: BookingRow): BookingListItem {
  return {
    booking_id: b.id,
    hold_id: b.hold_id,
    slot_id: b.slot_id,
    venue_id: b.venue_id,
    partner_id: b.partner_id,
    resource_id: b.resource_id,
    slot_start: b.slot_start.toISOString(),
    slot_end: b.slot_end.toISOString(),
    status: b.status,
    booked_at: b.booked_at.toISOString(),
    price_rupees: b.price_rupees,
    customer_name: b.customer_name,
    customer_phone: b.customer_phone,
    payment_method: b.payment_method,
    package_purchase_id: b.package_purchase_id,
    hold_group_id: b.hold_group_id,
    series_id: b.series_id,
  };
}

export function presentBookingDetail(b: BookingRow): BookingDetail {
  return {
    ...presentBookingListItem(b),
    payment_reference: b.payment_reference,
    customer_email: b.customer_email,
    cancelled_at: b.cancelled_at?.toISOString() ?? null,
    refunded_at: b.refunded_at?.toISOString() ?? null,
  };
}
