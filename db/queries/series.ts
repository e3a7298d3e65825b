/**
 * Queries on `series`: a weekly window on one resource, held as one hold group. A series is
 * previewed and placed by one database function each (db/functions/preview_series.sql,
 * place_series.sql), judged by the same judge_series(); its read is its row, its group and every
 * occurrence with its hold and booking (series_json()).
 */
import { traceSetting } from '../platform/tracing.ts';
import type { Knex } from '../postgres/knex.ts';
import { bookingFromJson, type BookingRow } from './bookings.ts';
import { datesIn, type DatabaseWrite } from './database-write.ts';
import type { HoldGroupRow } from './hold-groups.ts';
import { holdFromJson, type HoldRow } from './holds.ts';

/** A row of `series`: the pattern as created. */
export interface SeriesRow {
  id: string;
  partner_id: string;
  venue_id: string;
  resource_id: string;
  hold_group_id: string;
  timezone: string;
  first_date: string;
  /** HH:MM:SS as PostgreSQL writes a time. */
  start_time: string;
  slot_duration_minutes: number;
  count: number;
  interval_weeks: number;
  price_rupees: number;
  created_at: Date;
}

/** A row of `series_occurrences`: an occurrence as it was at creation. */
export interface OccurrenceRow {
  occurrence_index: number;
  local_date: string;
  slot_start: Date | null;
  slot_end: Date | null;
  utc_offset: string | null;
  created_status: 'HELD' | 'SKIPPED' | 'EXCLUDED';
  reason: string | null;
  price_rupees: number | null;
  hold_id: string | null;
}

/** A series with its group and every occurrence (with its hold and booking), as read at `read_at`. */
export interface Series {
  series: SeriesRow;
  group: HoldGroupRow;
  occurrences: { occurrence: OccurrenceRow; hold: HoldRow | null; booking: BookingRow | null }[];
  read_at: Date;
}

/** A pattern as the partner sent it (the API checked it), with the customer for the discount. */
export interface Pattern {
  venueId: string;
  resourceId: string;
  firstDate: string;
  startTime: string;
  minutes: number;
  count: number;
  intervalWeeks: number;
  excludeDates: readonly string[];
  customerPhone: string | null;
}

/** An occurrence as the preview judges it. */
export interface PreviewedOccurrence {
  occurrence_index: number;
  local_date: string;
  slot_start: string | null;
  slot_end: string | null;
  utc_offset: string | null;
  excluded: boolean;
  reason: string | null;
  price_rupees: number | null;
}

const GROUP_TIMESTAMPS = [
  'hold_expiry_at',
  'created_at',
  'updated_at',
  'confirmed_at',
  'cancelled_at',
  'expired_at',
];

/** A series from its JSON (series_json()): timestamps become Dates, as the driver makes them. */
export function seriesFromJson(json: Record<string, unknown>): Series {
  const { series, group, occurrences, read_at } = json as {
    series: Record<string, unknown>;
    group: Record<string, unknown>;
    occurrences: {
      occurrence: Record<string, unknown>;
      hold: Record<string, unknown> | null;
      booking: Record<string, unknown> | null;
    }[];
    read_at: string;
  };
  return {
    read_at: new Date(read_at),
    series: datesIn(series, ['created_at']) as unknown as SeriesRow,
    group: datesIn(group, GROUP_TIMESTAMPS) as unknown as HoldGroupRow,
    occurrences: occurrences.map((o) => ({
      occurrence: datesIn(o.occurrence, ['slot_start', 'slot_end']) as unknown as OccurrenceRow,
      hold: o.hold && holdFromJson(o.hold),
      booking: o.booking && bookingFromJson(o.booking),
    })),
  };
}

/** A series and what a change of it changed (cancel, refund: the occurrence indexes, ascending). */
export interface ChangedSeries extends Series {
  changed: number[];
}

/** A changed series from its JSON (what a cancel or refund stores). */
export function changedSeriesFromJson(json: Record<string, unknown>): ChangedSeries {
  return { ...seriesFromJson(json), changed: json.changed as number[] };
}

function patternArguments(p: Pattern) {
  return [
    p.venueId,
    p.resourceId,
    p.firstDate,
    p.startTime,
    p.minutes,
    p.count,
    p.intervalWeeks,
    [...p.excludeDates],
  ];
}

/**
 * Previews a pattern (preview_series()): the venue's zone and every occurrence as judged now,
 * nothing stored. A refusal (the venue, the resource) is thrown as a PB000 error (`refusalOf()`).
 */
export async function preview(
  db: Knex,
  partnerId: string,
  p: Pattern,
): Promise<{ timezone: string; occurrences: PreviewedOccurrence[] }> {
  const { rows } = await db.raw<{
    rows: { json: { timezone: string; occurrences: PreviewedOccurrence[] } }[];
  }>('select preview_series(?, ?, ?, ?::date, ?::time, ?, ?, ?, ?::date[], ?) as json', [
    partnerId,
    ...patternArguments(p),
    p.customerPhone,
  ]);
  return rows[0]!.json;
}

/** A series as the database function places it. */
export interface SeriesPlacement extends Pattern {
  partnerId: string;
  idempotencyKey: string;
  fingerprint: string;
  onConflict: 'reject' | 'skip';
  minOccurrences: number;
}

/**
 * Places a series in one statement, its own transaction (place_series()), with the trace in scope.
 * A refusal is thrown as a PB000 error (`refusalOf()`). The result is the series' JSON
 * (`seriesFromJson()` revives it), or a key's record of any operation.
 */
export async function place(db: Knex, p: SeriesPlacement): Promise<DatabaseWrite> {
  const { rows } = await db.raw<{ rows: DatabaseWrite[] }>(
    'select * from place_series(?::text, ?, ?, ?, ?, ?, ?::date, ?::time, ?, ?, ?, ?::date[], ?, ?, ?)',
    [
      traceSetting(),
      p.partnerId,
      p.idempotencyKey,
      p.fingerprint,
      ...patternArguments(p),
      p.customerPhone,
      p.onConflict,
      p.minOccurrences,
    ],
  );
  return rows[0]!;
}

/** A series as it is now; undefined when there is none. */
export async function find(db: Knex, id: string): Promise<Series | undefined> {
  const { rows } = await db.raw<{ rows: { json: Record<string, unknown> | null }[] }>(
    'select series_json(?) as json',
    [id],
  );
  const json = rows[0]?.json;
  return json ? seriesFromJson(json) : undefined;
}

/** A series locked for a change by `partnerId`, with whether its venue is still the partner's. */
export interface SeriesForChange extends SeriesRow {
  venue_authorized: boolean;
}

/**
 * The caller's series locked for a change (its row; the bookings it changes are locked by the
 * change); undefined when it is not the caller's (another partner's row is never locked).
 */
export async function lockForChange(
  trx: Knex,
  id: string,
  partnerId: string,
): Promise<SeriesForChange | undefined> {
  const { rows } = await trx.raw<{ rows: SeriesForChange[] }>(
    'select s.*, venue_authorized(?, s.venue_id) as venue_authorized from series s where s.id = ? and s.partner_id = ? for update',
    [partnerId, id, partnerId],
  );
  return rows[0];
}

/**
 * The bookings of a series' occurrences from `fromIndex` on whose window starts after now, locked,
 * in occurrence order, each with its occurrence's index: what "this and following" may change.
 */
export async function changeableBookings(
  trx: Knex,
  seriesId: string,
  fromIndex: number,
): Promise<(BookingRow & { occurrence_index: number })[]> {
  const { rows } = await trx.raw<{ rows: (BookingRow & { occurrence_index: number })[] }>(
    `select b.*, o.occurrence_index from series_occurrences o join bookings b on b.hold_id = o.hold_id
      where o.series_id = ? and o.occurrence_index >= ? and b.slot_start > now()
      order by o.occurrence_index
        for update of b`,
    [seriesId, fromIndex],
  );
  return rows;
}
