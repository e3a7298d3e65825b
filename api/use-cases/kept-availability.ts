/**
 * The availability grids this web process sent, kept to be sent again while they still stand. A
 * venue's day is two thousand slots (~440 KB): reading and writing it costs the database and this
 * process ~5 ms of CPU a request, and partners ask for the same days over and over. A kept grid is
 * sent again only when the database says, in the statement that would otherwise read the grid
 * anew (`availability_snapshot_since()`), that nothing changed it since: no change in the
 * availability change log concerns its date (every change of what availability shows records one
 * there, in its own transaction), and time alone has not changed it yet (a hold's expiry, the date
 * entering or leaving the booking window, a slot coming within the lead time). The partner's access
 * is checked on every request, kept grid or not, and the answer carries the change log's position
 * of that request's snapshot: byte for byte what reading the grid anew would have sent.
 *
 * Nothing here is a partner's: a grid is the same for every partner who may see the venue.
 */
import type { AvailabilityRead, KnownGrid, ResourceDay } from '../../db/queries/slots.ts';

/** A grid as kept: its bytes up to its `changes_cursor`, and what the database needs to judge it. */
export interface KeptGrid extends KnownGrid {
  readonly bytes: Buffer;
  /**
   * A whole venue's grid keeps its resources' days too: while it stands, each resource's grid on
   * that date is its day, so a first request for one resource is answered from them
   * (`dayOfResource`) after the same question, instead of reading it anew.
   */
  readonly days?: readonly ResourceDay[];
}

/** What a process keeps at most, in bytes of grids: ~70 whole venue days, or thousands of one court's. */
export const MAX_KEPT_BYTES = 32 * 1024 * 1024;
/**
 * How long a grid is kept at most from its read, whatever the change log says: a change made
 * outside the service (an operator's SQL that records no change) reaches neither the feed nor a
 * kept grid, and this bounds how long the grid goes on showing the state before it.
 */
export const MAX_KEPT_MS = 5 * 60_000;
/** What a kept grid costs beyond its bytes (the entry, its key, the map's slot), roughly. */
const ENTRY_OVERHEAD = 256;
/** What a kept day costs per slot (its price and availability in two arrays), roughly. */
const DAY_SLOT_BYTES = 24;

/** Kept grids by key, the least recently sent first (a Map keeps insertion order). */
const kept = new Map<string, KeptGrid>();
let keptBytes = 0;

/** The key of a grid: the venue and resource as asked (they appear in the bytes), and the date. */
export function gridKey(venueId: string, date: string, resourceId: string | undefined): string {
  return `${venueId}|${date}|${resourceId ?? ''}`;
}

/** The grid kept under `key`, if any; it is then the most recently used. */
export function keptGrid(key: string): KeptGrid | undefined {
  const grid = kept.get(key);
  if (grid !== undefined) {
    kept.delete(key);
    kept.set(key, grid);
  }
  return grid;
}

/**
 * Keeps `grid` under `key` in place of `replaced` (what `keptGrid` gave, or undefined): when another
 * request kept a grid there in the meantime, that one stays, so a grid is never paired with another
 * read's position. The least recently used go while over `MAX_KEPT_BYTES`.
 */
export function keepGrid(key: string, grid: KeptGrid, replaced: KeptGrid | undefined): void {
  const current = kept.get(key);
  if (current !== replaced) return;
  if (current !== undefined) forget(key, current);
  const cost = costOf(grid);
  if (cost > MAX_KEPT_BYTES) return;
  kept.set(key, grid);
  keptBytes += cost;
  for (const [oldKey, old] of kept) {
    if (keptBytes <= MAX_KEPT_BYTES) break;
    forget(oldKey, old);
  }
}

/**
 * Requests answered with a kept grid, with a grid read anew, and with one resource's day of a kept
 * whole venue's, since the process started.
 */
export const keptCounts = { sentAgain: 0, readAnew: 0, fromVenue: 0 };

/** Drops every kept grid (tests). */
export function forgetKeptGrids(): void {
  kept.clear();
  keptBytes = 0;
}

/** How many grids and bytes are kept (tests). */
export function keptSize(): { grids: number; bytes: number } {
  return { grids: kept.size, bytes: keptBytes };
}

function forget(key: string, grid: KeptGrid): void {
  kept.delete(key);
  keptBytes -= costOf(grid);
}

function costOf(grid: KeptGrid): number {
  let slots = 0;
  for (const day of grid.days ?? []) slots += day.prices.length;
  return grid.bytes.length + ENTRY_OVERHEAD + slots * DAY_SLOT_BYTES;
}

/**
 * The kept whole-venue grid whose days can answer for `resourceId` on its date, if any: the id as
 * the database writes it (lower-case), so that it is found among the days.
 */
export function keptVenueGrid(venueId: string, date: string, resourceId: string): VenueGrid | undefined {
  if (!CANONICAL_UUID.test(resourceId)) return undefined;
  const venue = kept.get(gridKey(venueId, date, undefined));
  return venue !== undefined && hasDays(venue) ? venue : undefined;
}

/** A kept whole venue's grid, with its resources' days. */
export type VenueGrid = KeptGrid & { readonly days: readonly ResourceDay[] };

function hasDays(grid: KeptGrid): grid is VenueGrid {
  return grid.days !== undefined;
}

/** One resource's day among a whole venue's: none when it shows no slot that date (closed). */
export function dayOfResource(days: readonly ResourceDay[], resourceId: string): ResourceDay[] {
  return days.filter((day) => day.times.resourceId === resourceId);
}

const CANONICAL_UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/**
 * Until when (epoch ms) a grid just read may be sent again, time alone considered: what the
 * database found (holds expiring, the booking window's edges), the first instant a slot that starts
 * more than the lead time from now stops doing so (a slot can be held only while
 * `start > now + lead`), and `MAX_KEPT_MS` from now.
 */
export function validUntil(read: Extract<AvailabilityRead, { unchanged: false }>): number {
  const leadMs = read.leadMinutes * 60_000;
  let until = Math.min(read.validUntilMs, read.nowMs + MAX_KEPT_MS);
  for (const day of read.grid.days) {
    for (const start of day.times.starts) {
      const losesLead = start - leadMs;
      if (losesLead > read.nowMs && losesLead < until) until = losesLead;
    }
  }
  return until;
}
