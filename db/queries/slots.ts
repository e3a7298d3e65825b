/**
 * The slot grid as availability shows it, from `venue_availability()` in SQL, which reads
 * `venue_slots()`: the one definition of the grid, which holds check against too.
 */
import type { Knex } from '../postgres/knex.ts';
import { runStatement } from '../postgres/statement.ts';
import { isUuid } from './resources.ts';

/**
 * The times of a resource's slots on a date, position by position (in no particular order; each
 * start says where its slot goes), in epoch milliseconds. The same times of the same resource are
 * the same object on every request while kept (see `internTimes`), so what is derived from them
 * alone (ids, formatted times) can be kept with them.
 */
export interface SlotTimes {
  readonly resourceId: string;
  readonly starts: readonly number[];
  readonly ends: readonly number[];
}

/** A resource's slots on a date: their times, and per position the price and whether it can be held. */
export interface ResourceDay {
  readonly times: SlotTimes;
  readonly prices: readonly number[];
  /** The booking rules allow a hold (venue active, after now plus lead time, no blackout) and no
   * live reservation of its units overlaps it. */
  readonly available: readonly boolean[];
}

/** A resource's slots as the statement sends them: comma-separated lists, position by position. */
interface ResourceDayRow {
  resource_id: string;
  starts_ms: string;
  ends_ms: string;
  prices: string;
  available: string;
}

/** The grid of a date and the change log's position it was read at (its `changes_cursor`). */
export interface AvailabilitySnapshot {
  days: ResourceDay[];
  /** The last position of the availability change log, in the snapshot the grid was read in. */
  changesPosition: bigint;
}

/** A grid read before, as `availableOnDate` asks whether it still stands. */
export interface KnownGrid {
  /** The change log's position it is exact at. */
  changesPosition: bigint;
  /** The snapshot (`pg_snapshot` text) it is exact in: what it shows of every change that one saw. */
  snapshot: string;
  /** Epoch milliseconds from which time alone may have changed it (Infinity: never). */
  validUntilMs: number;
}

/** What `availableOnDate` answers. */
export type AvailabilityRead =
  /** The grid given as known still stands, now exact at `changesPosition`, in `snapshot`. */
  | { unchanged: true; changesPosition: bigint; snapshot: string }
  | {
      unchanged: false;
      grid: AvailabilitySnapshot;
      /** The snapshot it was read in (`pg_snapshot` text). */
      snapshot: string;
      /** The database's now, in epoch milliseconds, when it was read. */
      nowMs: number;
      /** The venue's lead time: a slot can be held while it starts more than this from now. */
      leadMinutes: number;
      /** Until when (epoch ms) time alone leaves the grid as it is, lead time aside (Infinity: ever). */
      validUntilMs: number;
    };

/** The statement's rows: the grid's, then one with the position and the rest (resource null). */
interface SnapshotRow extends ResourceDayRow {
  changes_position: string | null;
  snapshot: string | null;
  unchanged: boolean | null;
  now_ms: number | null;
  lead_minutes: number | null;
  valid_until_ms: number | null;
}

/**
 * The grid a partner may see of a venue (or one of its resources) on a venue-local date, one entry
 * per resource, by resource id, and the change log's position in the same snapshot; or, given a
 * grid read before that still stands, only the position it is now exact at
 * (`availability_snapshot_since()`). One round trip; refuses (PB000, `refusalOf()`)
 * `venue_not_authorized` and `resource_not_in_venue`, known grid or not.
 */
export async function availableOnDate(
  db: Knex,
  partnerId: string,
  venueId: string,
  date: string,
  resourceId?: string,
  known?: KnownGrid,
): Promise<AvailabilityRead> {
  const { rows } = await runStatement<SnapshotRow>(
    db,
    'select * from availability_snapshot_since(?, ?, ?::date, ?, ?, ?, ?, ?)',
    [
      partnerId,
      venueId,
      date,
      resourceId !== undefined,
      resourceId && isUuid(resourceId) ? resourceId : null,
      known ? known.changesPosition.toString() : null,
      known ? known.snapshot : null,
      known ? known.validUntilMs : null,
    ],
  );
  const last = rows.at(-1)!;
  const changesPosition = BigInt(last.changes_position!);
  const snapshot = last.snapshot!;
  if (last.unchanged) return { unchanged: true, changesPosition, snapshot };
  const days = rows.slice(0, -1);
  return {
    unchanged: false,
    snapshot,
    grid: {
      days: days.map((row) => ({
        times: internTimes(row),
        prices: row.prices.split(',').map(Number),
        available: row.available.split(',').map((flag) => flag === 't'),
      })),
      changesPosition,
    },
    nowMs: last.now_ms!,
    leadMinutes: last.lead_minutes!,
    validUntilMs: last.valid_until_ms!,
  };
}

/**
 * Resource days whose times are kept, the least recently asked for out first: a venue of 43
 * resources has ~950 over three weeks; with what the presenter keeps beside them
 * (api/presenters/availability.ts), ~15 KB each (ids and formatted times).
 */
const MAX_KEPT_TIMES = 2048;
const keptTimes = new Map<string, SlotTimes>();

/** The SlotTimes of a row: the kept object when the resource's times are the same as before. */
function internTimes(row: ResourceDayRow): SlotTimes {
  const key = `${row.resource_id}|${row.starts_ms}|${row.ends_ms}`;
  let times = keptTimes.get(key);
  if (times === undefined) {
    times = {
      resourceId: row.resource_id,
      starts: row.starts_ms.split(',').map(Number),
      ends: row.ends_ms.split(',').map(Number),
    };
    if (keptTimes.size >= MAX_KEPT_TIMES) keptTimes.delete(keptTimes.keys().next().value!);
  } else {
    keptTimes.delete(key); // re-inserted below: a Map keeps insertion order, newest last
  }
  keptTimes.set(key, times);
  return times;
}
