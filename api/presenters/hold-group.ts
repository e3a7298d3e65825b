/** Hold groups as the API shows them. */
import { shownStatus, type ConfirmedHoldGroup, type HoldGroup } from '../../db/queries/hold-groups.ts';
import type { HoldGroupConfirmResponse, HoldGroupResponse } from '../schemas/hold-groups.ts';

/**
 * A group as it was read: each hold shows its own status before the confirm (an ACTIVE one reads
 * EXPIRED from the group's hold_expiry_at on, as the group does) and its booking's after it.
 */
export function presentHoldGroup(read: HoldGroup): HoldGroupResponse {
  const { group, holds, read_at } = read;
  const due = group.hold_expiry_at.getTime() <= read_at.getTime();
  return {
    hold_group_id: group.id,
    venue_id: group.venue_id,
    series_id: group.series_id,
    status: shownStatus(read),
    hold_expiry_at: group.hold_expiry_at.toISOString(),
    price_rupees: group.price_rupees,
    created_at: group.created_at.toISOString(),
    holds: holds.map(({ hold, booking }) => ({
      item_index: hold.item_index!,
      hold_id: hold.id,
      slot_id: hold.slot_id,
      resource_id: hold.resource_id,
      slot_start: hold.slot_start.toISOString(),
      slot_end: hold.slot_end.toISOString(),
      price_rupees: hold.price_rupees,
      status: booking
        ? booking.status
        : hold.status === 'ACTIVE' && due
          ? 'EXPIRED'
          : heldStatus(hold.status),
      booking_id: booking?.id ?? null,
    })),
  };
}

/** A hold's own status before its booking: ACTIVE, CANCELLED or EXPIRED. */
function heldStatus(status: string): 'ACTIVE' | 'CANCELLED' | 'EXPIRED' {
  if (status === 'ACTIVE' || status === 'CANCELLED' || status === 'EXPIRED') return status;
  // A CONFIRMED hold always has its booking, written in the same transaction.
  throw new Error(`a grouped hold in status ${status} has no booking`);
}

/** A group's confirm: its bookings in item order; package_credits_consumed only when asked. */
export function presentConfirmedHoldGroup(confirmed: ConfirmedHoldGroup): HoldGroupConfirmResponse {
  const body: HoldGroupConfirmResponse = {
    hold_group_id: confirmed.group.id,
    status: 'CONFIRMED',
    price_rupees: confirmed.group.price_rupees,
    bookings: confirmed.holds.map(({ hold, booking }) => {
      if (!booking) throw new Error(`the confirmed hold ${hold.id} has no booking`);
      return {
        item_index: hold.item_index!,
        booking_id: booking.id,
        hold_id: hold.id,
        slot_id: booking.slot_id,
        status: 'BOOKED' as const,
        booked_at: booking.booked_at.toISOString(),
        price_rupees: booking.price_rupees,
        payment_method: booking.payment_method === 'package' ? 'package' : null,
        package_purchase_id: booking.package_purchase_id,
      };
    }),
  };
  if (confirmed.package_credits_consumed != null)
    body.package_credits_consumed = confirmed.package_credits_consumed;
  return body;
}
