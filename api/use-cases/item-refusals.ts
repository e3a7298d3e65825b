/**
 * The answer to a hold group or series whose items cannot all be held: one `details` entry per
 * failing item, in item order, each with its reason and a message a partner can act on, and the
 * status the reasons together give (CONTRACT.md): 400 when some reason is the venue's rules, else
 * 409 SLOT_NOT_AVAILABLE when some window is taken, else 409 TRANSFORMATION_CONFLICT.
 */
import {
  ITEM_REASONS,
  ItemsInConflictError,
  ItemsRejectedError,
  ItemsTakenError,
  type ItemReason,
  type ItemRefusal,
  type ItemsRefusedError,
} from '../errors.ts';

/** What each reason tells the partner. */
const MESSAGES: Record<ItemReason, string> = {
  UNKNOWN_RESOURCE: 'resource_id is not a resource of this venue (copy it from discovery).',
  NOT_ON_GRID:
    "The window must start on a start of the resource's day grid, last a whole multiple of its slot length, " +
    "and end by that day's last slot.",
  IN_PAST: 'The window has already started.',
  BEYOND_BOOKING_WINDOW: "The window is on a date beyond the venue's booking window.",
  CLOSED: 'The venue is paused, or the resource is closed on that day.',
  LEAD_TIME: "The window starts inside the venue's minimum lead time.",
  BLACKOUT: 'The window overlaps a blackout of the venue or of the resource.',
  TAKEN: 'The window is held or booked on this resource.',
  TRANSFORMATION_CONFLICT:
    'A resource sharing a part with this one (a convertible whole, or one of its parts) is held or booked in the window.',
};

/** A failing item, as a database function reports it: its position and reason. */
export interface FailingItem {
  index: number;
  reason: string;
  local_date?: string;
}

/** The error for these failing items, each named `${prefix}.${index}` in the body. */
export function itemsRefused(
  prefix: 'items' | 'occurrences',
  failing: readonly FailingItem[],
): ItemsRefusedError {
  const details: ItemRefusal[] = failing.map(({ index, reason, local_date }) => {
    const known = ITEM_REASONS.find((r) => r === reason);
    if (!known) throw new Error(`an item was refused for an unknown reason: ${reason}`);
    return {
      field: `${prefix}.${index}`,
      in: 'body',
      message: MESSAGES[known],
      reason: known,
      ...(local_date === undefined ? {} : { local_date }),
    };
  });
  const reasons = new Set(details.map((d) => d.reason));
  if ([...reasons].some((r) => r !== 'TAKEN' && r !== 'TRANSFORMATION_CONFLICT')) {
    return new ItemsRejectedError(details);
  }
  return reasons.has('TAKEN') ? new ItemsTakenError(details) : new ItemsInConflictError(details);
}
