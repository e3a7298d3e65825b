/** Series and their previews as the API shows them. */
import type { ChangedSeries, OccurrenceRow, Series } from '../../db/queries/series.ts';
import type { HoldRow } from '../../db/queries/holds.ts';
import type { BookingRow } from '../../db/queries/bookings.ts';
import type { ItemReason } from '../errors.ts';
import type { SeriesChangeResponse, SeriesPreviewResponse, SeriesResponse } from '../schemas/series.ts';
import type { SeriesPreview } from '../use-cases/preview-series.ts';

type OccurrenceStatus = SeriesResponse['occurrences'][number]['status'];

/** A preview: each occurrence AVAILABLE (with its price), UNAVAILABLE (with its reason) or EXCLUDED. */
export function presentSeriesPreview(preview: SeriesPreview): SeriesPreviewResponse {
  const occurrences = preview.occurrences.map((o) => ({
    occurrence_index: o.occurrence_index,
    local_date: o.local_date,
    slot_start: o.slot_start && new Date(o.slot_start).toISOString(),
    slot_end: o.slot_end && new Date(o.slot_end).toISOString(),
    utc_offset: o.utc_offset,
    status: o.excluded ? ('EXCLUDED' as const) : o.reason ? ('UNAVAILABLE' as const) : ('AVAILABLE' as const),
    reason: o.reason as ItemReason | null,
    price_rupees: o.price_rupees,
  }));
  return {
    venue_id: preview.venueId,
    resource_id: preview.resourceId,
    timezone: preview.timezone,
    price_rupees: occurrences.reduce((sum, o) => sum + (o.status === 'AVAILABLE' ? o.price_rupees! : 0), 0),
    occurrences,
  };
}

/** A series as it was read: each occurrence as created, then as its hold or booking goes. */
export function presentSeries(read: Series): SeriesResponse {
  const { series, group, occurrences, read_at } = read;
  const due = group.hold_expiry_at.getTime() <= read_at.getTime();
  return {
    series_id: series.id,
    venue_id: series.venue_id,
    hold_group_id: series.hold_group_id,
    resource_id: series.resource_id,
    timezone: series.timezone,
    first_date: series.first_date,
    start_time: series.start_time.slice(0, 5),
    slot_duration_minutes: series.slot_duration_minutes,
    count: series.count,
    interval_weeks: series.interval_weeks,
    hold_expiry_at: group.hold_expiry_at.toISOString(),
    price_rupees: series.price_rupees,
    occurrences: occurrences.map(({ occurrence, hold, booking }) => ({
      occurrence_index: occurrence.occurrence_index,
      local_date: occurrence.local_date,
      slot_start: occurrence.slot_start?.toISOString() ?? null,
      slot_end: occurrence.slot_end?.toISOString() ?? null,
      utc_offset: occurrence.utc_offset,
      status: statusOf(occurrence, hold, booking, due),
      reason: occurrence.reason as ItemReason | null,
      price_rupees: occurrence.price_rupees,
      hold_id: occurrence.hold_id,
      booking_id: booking?.id ?? null,
    })),
  };
}

/** A series after a cancel or refund, with the occurrences it changed. */
export function presentSeriesChange(changed: ChangedSeries): SeriesChangeResponse {
  return { ...presentSeries(changed), changed: changed.changed };
}

/**
 * What an occurrence is now: EXCLUDED or SKIPPED as created; a held one as its hold goes (HELD while
 * ACTIVE and before the group's expiry, EXPIRED from it, CANCELLED once released) and, once
 * confirmed, as its booking goes (BOOKED, CANCELLED, REFUNDED).
 */
function statusOf(
  occurrence: OccurrenceRow,
  hold: HoldRow | null,
  booking: BookingRow | null,
  due: boolean,
): OccurrenceStatus {
  if (occurrence.created_status !== 'HELD' || !hold) return occurrence.created_status;
  if (booking) return booking.status;
  if (hold.status === 'ACTIVE') return due ? 'EXPIRED' : 'HELD';
  if (hold.status === 'EXPIRED' || hold.status === 'CANCELLED') return hold.status;
  throw new Error(`the held occurrence ${occurrence.occurrence_index} is CONFIRMED without a booking`);
}
