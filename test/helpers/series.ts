/**
 * Helpers for series tests: the routes (any answer, for tests that inspect it), a pattern on a
 * venue-local date a number of days ahead, and wall clocks read with Intl (independently of
 * PostgreSQL's time zone code).
 */
import { randomUUID } from 'node:crypto';
import type { Knex } from '../../db/postgres/knex.ts';
import { localDate } from './booking.ts';
import { call, type CallResult, type TestServer } from './http.ts';

/** POST /bookings/series/preview. */
export function previewSeries(
  server: TestServer,
  apiKey: string,
  body: Record<string, unknown>,
): Promise<CallResult> {
  return call(server, 'POST', '/api/v1/bookings/series/preview', { key: apiKey, body });
}

/** POST /bookings/series with a fresh idempotency key unless one is given. */
export function createSeries(
  server: TestServer,
  apiKey: string,
  body: Record<string, unknown>,
): Promise<CallResult> {
  return call(server, 'POST', '/api/v1/bookings/series', {
    key: apiKey,
    body: { idempotency_key: randomUUID(), ...body },
  });
}

/** GET /bookings/series/{id}. */
export function readSeries(server: TestServer, apiKey: string, seriesId: string): Promise<CallResult> {
  return call(server, 'GET', `/api/v1/bookings/series/${seriesId}`, { key: apiKey });
}

/** POST /bookings/series/{id}/cancel or /refund with a fresh key unless given. */
export function changeSeries(
  server: TestServer,
  apiKey: string,
  seriesId: string,
  change: 'cancel' | 'refund',
  body: Record<string, unknown> = {},
): Promise<CallResult> {
  return call(server, 'POST', `/api/v1/bookings/series/${seriesId}/${change}`, {
    key: apiKey,
    body: { idempotency_key: randomUUID(), ...body },
  });
}

/** The venue-local date `daysAhead` days from today, and `weeks` weeks later. */
export async function weeksFrom(
  db: Knex,
  venueId: string,
  daysAhead: number,
  weeks: number[],
): Promise<string[]> {
  const first = await localDate(db, venueId, daysAhead);
  return weeks.map((w) => addDays(first, 7 * w));
}

/** A YYYY-MM-DD date plus `days`. */
export function addDays(date: string, days: number): string {
  return new Date(Date.parse(`${date}T00:00:00Z`) + days * 86_400_000).toISOString().slice(0, 10);
}

/** The wall clock of `instant` in `zone`: `YYYY-MM-DD HH:MM`. */
export function wallClock(instant: Date, zone: string): string {
  const parts = Object.fromEntries(
    new Intl.DateTimeFormat('en-CA', {
      timeZone: zone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
    })
      .formatToParts(instant)
      .map((p) => [p.type, p.value]),
  );
  return `${parts.year}-${parts.month}-${parts.day} ${parts.hour}:${parts.minute}`;
}

/** `zone`'s offset from UTC at `instant`, `+HH:MM` / `-HH:MM`. */
export function offsetAt(instant: Date, zone: string): string {
  const wall = Date.parse(`${wallClock(instant, zone).replace(' ', 'T')}:00Z`);
  const minutes = Math.round((wall - Math.floor(instant.getTime() / 60_000) * 60_000) / 60_000);
  const sign = minutes < 0 ? '-' : '+';
  const abs = Math.abs(minutes);
  return `${sign}${String(Math.floor(abs / 60)).padStart(2, '0')}:${String(abs % 60).padStart(2, '0')}`;
}

/**
 * The grid starts of a resource opening at local midnight with `stepMinutes` slots, on `date` in
 * `zone`: stepping in absolute time from the instant of local midnight while the wall-clock date is
 * still `date`, as the service's grid does.
 */
export function gridOf(date: string, zone: string, stepMinutes: number): Date[] {
  let midnight = Date.parse(`${date}T00:00:00Z`) - 15 * 3_600_000;
  while (wallClock(new Date(midnight), zone) !== `${date} 00:00`) {
    midnight += 15 * 60_000;
    if (midnight > Date.parse(`${date}T00:00:00Z`) + 15 * 3_600_000)
      throw new Error(`no local midnight on ${date}`);
  }
  const starts: Date[] = [];
  for (let at = midnight; wallClock(new Date(at), zone).startsWith(date); at += stepMinutes * 60_000) {
    starts.push(new Date(at));
  }
  return starts;
}

/** The dates of the next changes of `zone`'s UTC offset within `days` days of `from` (local noon to noon). */
export function offsetChanges(zone: string, from: string, days: number): string[] {
  const changes: string[] = [];
  let previous = offsetAt(new Date(`${from}T12:00:00Z`), zone);
  for (let d = 1; d <= days; d++) {
    const date = addDays(from, d);
    const offset = offsetAt(new Date(`${date}T12:00:00Z`), zone);
    if (offset !== previous) changes.push(date);
    previous = offset;
  }
  return changes;
}
