/** Recurring series: a weekly window on one resource, previewed, then held as one hold group. */
import {
  IdempotencyKeyMismatchError,
  InvalidHoldStateError,
  ItemsInConflictError,
  ItemsRejectedError,
  ItemsTakenError,
  NotOwnerError,
  SeriesNotFoundError,
  VenueNotAuthorizedError,
} from '../errors.ts';
import { presented, sentRequest } from '../idempotency.ts';
import { presentSeries, presentSeriesChange, presentSeriesPreview } from '../presenters/series.ts';
import { defineRoute } from '../route.ts';
import {
  CreateSeriesBody,
  SeriesChangeBody,
  SeriesChangeResponse,
  SeriesParams,
  SeriesPatternBody,
  SeriesPreviewResponse,
  SeriesResponse,
} from '../schemas/series.ts';
import { cancelSeries, refundSeries } from '../use-cases/change-series.ts';
import { createSeries } from '../use-cases/create-series.ts';
import { previewSeries } from '../use-cases/preview-series.ts';
import { getSeries } from '../use-cases/read-series.ts';
import type * as series from '../../db/queries/series.ts';

const tag = 'Series';
const venueId = '3f1c2a9e-8d7b-4c55-9a0e-2b6f4d8e1a73';
const resourceId = '9b2d7c1e-4f3a-4e8b-b1c6-5d0a7e9f2c48';
const seriesId = '2d4f6a8c-0e2b-4d6f-8a0c-2e4b6d8f0a1c';
const patternExample = {
  venue_id: venueId,
  resource_id: resourceId,
  first_date: '2027-03-02',
  start_time: '19:00',
  slot_duration_minutes: 60,
  count: 4,
  exclude_dates: ['2027-03-16'],
  customer_phone: '9812345678',
};
const dates = ['2027-03-02', '2027-03-09', '2027-03-16', '2027-03-23'];
const starts = ['2027-03-02T13:30:00.000Z', '2027-03-09T13:30:00.000Z', null, '2027-03-23T13:30:00.000Z'];
const ends = ['2027-03-02T14:30:00.000Z', '2027-03-09T14:30:00.000Z', null, '2027-03-23T14:30:00.000Z'];
const previewExample = {
  venue_id: venueId,
  resource_id: resourceId,
  timezone: 'Asia/Kolkata',
  price_rupees: 1000,
  occurrences: dates.map((local_date, i) => ({
    occurrence_index: i,
    local_date,
    slot_start: starts[i],
    slot_end: ends[i],
    utc_offset: starts[i] ? '+05:30' : null,
    status: ['AVAILABLE', 'UNAVAILABLE', 'EXCLUDED', 'AVAILABLE'][i],
    reason: i === 1 ? 'TAKEN' : null,
    price_rupees: i === 0 || i === 3 ? 500 : null,
  })),
};
const seriesExample = (statuses: string[], bookingIds: (string | null)[]) => ({
  series_id: seriesId,
  venue_id: venueId,
  hold_group_id: '6a1f0c3e-2b4d-4e8f-9a7c-1d3e5f7a9b2c',
  resource_id: resourceId,
  timezone: 'Asia/Kolkata',
  first_date: '2027-03-02',
  start_time: '19:00',
  slot_duration_minutes: 60,
  count: 4,
  interval_weeks: 1,
  hold_expiry_at: '2027-02-20T10:45:00.000Z',
  price_rupees: 1000,
  occurrences: dates.map((local_date, i) => ({
    occurrence_index: i,
    local_date,
    slot_start: starts[i],
    slot_end: ends[i],
    utc_offset: starts[i] ? '+05:30' : null,
    status: statuses[i],
    reason: i === 1 ? 'TAKEN' : null,
    price_rupees: i === 0 || i === 3 ? 500 : null,
    hold_id:
      i === 0 || i === 3
        ? ['7c9e6679-7425-40de-944b-e07fc1f90ae7', null, null, '0e4b2d6f-8a1c-4e3b-9d5f-7a9c1e3b5d7f'][i]
        : null,
    booking_id: bookingIds[i],
  })),
});
const access = [NotOwnerError, SeriesNotFoundError];
const refusals = [ItemsRejectedError, ItemsTakenError, ItemsInConflictError];

/** The pattern of a checked body, as the database functions take it. */
function patternOf(body: SeriesPatternBody): series.Pattern {
  return {
    venueId: body.venue_id,
    resourceId: body.resource_id,
    firstDate: body.first_date,
    startTime: body.start_time,
    minutes: body.slot_duration_minutes,
    count: body.count,
    intervalWeeks: body.interval_weeks,
    excludeDates: body.exclude_dates,
    customerPhone: body.customer_phone ?? null,
  };
}

export const seriesRoutes = [
  defineRoute({
    method: 'POST',
    path: '/bookings/series/preview',
    operationId: 'previewSeries',
    summary: 'Preview a weekly series',
    description:
      'Every occurrence of the pattern on the venue’s clock (occurrence k on first_date + 7 × interval_weeks × k, ' +
      'at the venue-local wall-clock start_time, whatever daylight saving does to the UTC instant), each ' +
      'AVAILABLE with its price, UNAVAILABLE with its reason, or EXCLUDED. Nothing is held or stored: like ' +
      'availability, a hint; create judges the same way. on_conflict, min_occurrences and idempotency_key are ' +
      'ignored if sent.',
    tag,
    auth: true,
    body: SeriesPatternBody,
    bodyExample: patternExample,
    responses: {
      200: {
        description: 'Every occurrence, by index.',
        schema: SeriesPreviewResponse,
        example: previewExample,
      },
    },
    errors: [VenueNotAuthorizedError],
    async handler({ partnerId, body }, { db }) {
      return { status: 200, body: presentSeriesPreview(await previewSeries(db, partnerId, patternOf(body))) };
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/bookings/series',
    operationId: 'createSeries',
    summary: 'Hold a weekly series, checked whole',
    description:
      'Judges every occurrence in one transaction and holds the holdable ones as one hold group (confirm and ' +
      'release it through /bookings/hold-groups/{hold_group_id}). `reject` (the default): any occurrence that ' +
      'cannot be held fails the request; `skip`: those occurrences are SKIPPED, and the request fails only ' +
      'when fewer than min_occurrences would be held. A failed request holds nothing; `details` names every ' +
      'failing occurrence (`occurrences.k`) with its `reason` and `local_date`, and the status follows the ' +
      'reasons as for a hold group. Occurrences may lie as far ahead as the venue’s series window. The same ' +
      'key with the same body replays the series with 201; any other request with it is ' +
      '409 IDEMPOTENCY_KEY_MISMATCH.',
    tag,
    auth: true,
    body: CreateSeriesBody,
    bodyExample: {
      ...patternExample,
      on_conflict: 'skip',
      min_occurrences: 2,
      idempotency_key: 'series-7f3a',
    },
    responses: {
      201: {
        description: 'The series (or, for a repeated key and body, the original series).',
        schema: SeriesResponse,
        example: seriesExample(['HELD', 'SKIPPED', 'EXCLUDED', 'HELD'], [null, null, null, null]),
      },
    },
    errors: [...refusals, VenueNotAuthorizedError, IdempotencyKeyMismatchError],
    async handler({ partnerId, body, sent }, deps) {
      const created = await createSeries(deps, partnerId, {
        pattern: patternOf(body),
        onConflict: body.on_conflict,
        minOccurrences: body.min_occurrences,
        idempotencyKey: body.idempotency_key,
        compared: sentRequest(sent, body),
      });
      return { status: 201, body: presented(created, presentSeries) };
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/bookings/series/{seriesId}',
    operationId: 'getSeries',
    summary: 'Get one of your series',
    description:
      'The series as it is now: each occurrence as created (HELD, SKIPPED, EXCLUDED), then as its hold or ' +
      'booking goes (EXPIRED, CANCELLED, BOOKED, REFUNDED). Readable after the venue grant is withdrawn.',
    tag,
    auth: true,
    params: SeriesParams,
    responses: {
      200: {
        description: 'The series.',
        schema: SeriesResponse,
        example: seriesExample(
          ['BOOKED', 'SKIPPED', 'EXCLUDED', 'BOOKED'],
          ['1f0e3d2c-4b5a-4c6d-8e7f-9a0b1c2d3e4f', null, null, '4a6c8e0b-2d4f-4a6c-8e0b-2d4f6a8c0e2b'],
        ),
      },
    },
    errors: access,
    async handler({ partnerId, params }, { db }) {
      return { status: 200, body: presentSeries(await getSeries(db, partnerId, params.seriesId)) };
    },
  }),
  ...(['cancel', 'refund'] as const).map((change) =>
    defineRoute({
      method: 'POST',
      path: `/bookings/series/{seriesId}/${change}`,
      operationId: change === 'cancel' ? 'cancelSeries' : 'refundSeries',
      summary:
        change === 'cancel'
          ? 'Cancel a series from an occurrence on'
          : 'Refund a series from an occurrence on',
      description:
        (change === 'cancel'
          ? 'Cancels every BOOKED occurrence from from_occurrence_index on whose window starts after now, '
          : 'Refunds every occurrence from from_occurrence_index on whose booking is BOOKED or CANCELLED and ' +
            'whose window starts after now, ') +
        'in one transaction, each exactly as the booking’s own route would (window freed, its event, waitlist ' +
        'promotion). Earlier occurrences and those already started are never touched. `changed` lists the ' +
        'occurrences changed. 409 INVALID_HOLD_STATE when nothing would change. One occurrence alone: the ' +
        'booking routes.',
      tag,
      auth: true,
      params: SeriesParams,
      body: SeriesChangeBody,
      bodyExample: {
        idempotency_key: `series-${change}-7f3a`,
        reason: 'league ended',
        from_occurrence_index: 3,
      },
      responses: {
        200: {
          description: 'The series after the change.',
          schema: SeriesChangeResponse,
          example: {
            ...seriesExample(
              ['BOOKED', 'SKIPPED', 'EXCLUDED', change === 'cancel' ? 'CANCELLED' : 'REFUNDED'],
              ['1f0e3d2c-4b5a-4c6d-8e7f-9a0b1c2d3e4f', null, null, '4a6c8e0b-2d4f-4a6c-8e0b-2d4f6a8c0e2b'],
            ),
            changed: [3],
          },
        },
      },
      errors: [...access, VenueNotAuthorizedError, InvalidHoldStateError, IdempotencyKeyMismatchError],
      async handler({ partnerId, params, body, sent }, deps) {
        const act = change === 'cancel' ? cancelSeries : refundSeries;
        return {
          status: 200,
          body: presented(await act(deps, partnerId, params.seriesId, body, sent), presentSeriesChange),
        };
      },
    }),
  ),
];
