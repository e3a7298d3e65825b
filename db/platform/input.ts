/**
 * The scalar shapes every input is built from, for the API's routes, the operator CLI and the
 * configuration alike
 * (CONTRACT.md, "Hardening answers"). Validation must be at least as strict as the columns behind
 * it: PostgreSQL refuses U+0000 in text (SQLSTATE 22021) and years it cannot store, and a string
 * with a lone surrogate cannot be written as UTF-8 at all (node-postgres would silently store
 * U+FFFD instead). Every string and date a client sends passes through one of these, so a value
 * that PostgreSQL would refuse is a 400 naming its field, never a 500.
 */
import { z } from 'zod';

/** The years a date or date-time may carry: PostgreSQL stores more, but nothing booked lies outside. */
export const MIN_YEAR = 1900;
export const MAX_YEAR = 9999;

const NUL = '\u0000';

/** Adds the two refusals every accepted string shares: U+0000, and ill-formed UTF-16. */
function storable(schema: z.ZodString): z.ZodString {
  return schema
    .refine((value) => !value.includes(NUL), 'must not contain U+0000')
    .refine((value) => value.isWellFormed(), 'must be well-formed Unicode (no lone surrogates)');
}

/**
 * Free text (names, reasons, payment references): trimmed at either end, otherwise kept exactly as
 * sent — no normalisation; emoji, joiners, combining marks and bidi controls stay. The maximum
 * holds for the text as sent, as the OpenAPI document's maxLength says (10,000 spaces are not a
 * 500-character reason, even if they trim to none); the minimum counts what is left after
 * trimming (two spaces are not a name).
 */
export function freeText(bounds: { min?: number; max: number }): z.ZodString {
  return storable(
    z
      .string()
      .max(bounds.max)
      .trim()
      .min(bounds.min ?? 0),
  );
}

/** An opaque token compared exactly (idempotency keys, resource ids): never trimmed. */
export function opaqueText(bounds: { min?: number; max: number; required?: string }): z.ZodString {
  return storable(
    z
      .string(bounds.required === undefined ? undefined : { error: bounds.required })
      .min(bounds.min ?? 0)
      .max(bounds.max),
  );
}

function yearInRange(text: string): boolean {
  const year = Number(text.slice(0, 4));
  return year >= MIN_YEAR && year <= MAX_YEAR;
}

const yearMessage = `must have a year from ${MIN_YEAR} to ${MAX_YEAR}`;

/** A calendar date, YYYY-MM-DD, that exists (2027-02-29 does not), in years 1900 to 9999. */
export const DateOnly = z.iso
  .date({ error: 'must be a date that exists, YYYY-MM-DD', abort: true })
  .refine(yearInRange, yearMessage);

/**
 * DateOnly whose refusal does not abort, for a date an object checks together with its other fields
 * (a series' pattern): zod skips an object's own checks once a field's issue aborts, so a bad
 * exclusion would hide what is wrong with the rest. The same refusals and the same document.
 */
export const DateOnlyBeside = z
  .string({ error: 'must be a date that exists, YYYY-MM-DD' })
  .superRefine((value, ctx) => {
    const parsed = DateOnly.safeParse(value);
    if (!parsed.success) ctx.addIssue({ code: 'custom', message: parsed.error.issues[0]!.message });
  })
  .meta({ format: 'date', pattern: (z.toJSONSchema(DateOnly) as { pattern: string }).pattern });

/**
 * ISO 8601's date-time, each part in the extended form (2026-11-22T18:30:00Z, …T18:30+05:30,
 * 2026-326T18:30Z, 2026-W47-7T18Z) or each in the basic form (20261122T183000Z, 2026326T1830+0530,
 * 2026W477T18Z): a calendar, ordinal or week date; hours, minutes and seconds down to the hour, the
 * last with an optional decimal fraction (a comma or a point); Z or an offset in hours or hours and
 * minutes. The two forms are not mixed within one value (ISO 8601 asks for one or the other).
 */
const EXTENDED_DATE_TIME =
  /^(\d{4})-(?:(\d{2})-(\d{2})|(\d{3})|W(\d{2})-(\d))[Tt](\d{2})(?::(\d{2})(?::(\d{2}))?)?(?:[.,](\d+))?(?:[Zz]|([+-])(\d{2})(?::(\d{2}))?)$/;
const BASIC_DATE_TIME =
  /^(\d{4})(?:(\d{2})(\d{2})|(\d{3})|W(\d{2})(\d))[Tt](\d{2})(?:(\d{2})(\d{2})?)?(?:[.,](\d+))?(?:[Zz]|([+-])(\d{2})(\d{2})?)$/;

/** Milliseconds in an hour, a minute and a second: what a fraction of the last time part counts. */
const FRACTION_UNIT_MS = [3_600_000, 60_000, 1_000];

/**
 * The instant an ISO 8601 date-time with an offset names, or undefined when it is not one or names
 * a date or time that does not exist (2027-02-29, day 366 of 2026, week 53 of 2026, 24:30, 18:60,
 * an offset of +24:00). A fraction of the last time part that falls between two milliseconds
 * rounds up to the later one: a Date holds milliseconds, and an instant a microsecond after a
 * slot's start must not become that start.
 */
export function parseIsoDateTime(text: string): Date | undefined {
  const m = EXTENDED_DATE_TIME.exec(text) ?? BASIC_DATE_TIME.exec(text);
  if (!m) return undefined;
  const number = (i: number) => Number(m[i] ?? 0);
  const year = number(1);
  const date =
    m[2] !== undefined
      ? calendarDate(year, number(2), number(3))
      : m[4] !== undefined
        ? dayOfYear(year, number(4))
        : weekDate(year, number(5), number(6));
  const [hour, minute, second] = [number(7), number(8), number(9)];
  const [offsetHours, offsetMinutes] = [number(12), number(13)];
  if (!date || hour > 23 || minute > 59 || second > 59 || offsetHours > 23 || offsetMinutes > 59)
    return undefined;
  const last = m[9] !== undefined ? 2 : m[8] !== undefined ? 1 : 0;
  const offset = (m[11] === '-' ? -1 : 1) * (offsetHours * 60 + offsetMinutes);
  date.setUTCHours(hour, minute - offset, second, fractionMs(m[10] ?? '', FRACTION_UNIT_MS[last]!));
  return date;
}

/** A decimal fraction (its digits) of `unitMs`, in whole milliseconds, rounded up. */
function fractionMs(digits: string, unitMs: number): number {
  const DIGITS = 15; // more than any unit needs to fix its millisecond; the rest only round up
  const scale = 10n ** BigInt(DIGITS);
  const scaled = BigInt(digits.slice(0, DIGITS).padEnd(DIGITS, '0')) * BigInt(unitMs);
  const inexact = scaled % scale !== 0n || /[1-9]/.test(digits.slice(DIGITS));
  return Number(scaled / scale) + (inexact ? 1 : 0);
}

/** Midnight UTC of a day of a year, or undefined when that day is not in the year. */
function dayOfYear(year: number, day: number): Date | undefined {
  if (day < 1 || day > (isLeap(year) ? 366 : 365)) return undefined;
  const date = new Date(0);
  date.setUTCFullYear(year, 0, day);
  return date;
}

function calendarDate(year: number, month: number, day: number): Date | undefined {
  const days = [31, isLeap(year) ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1];
  if (days === undefined || day < 1 || day > days) return undefined;
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  return date;
}

/**
 * Day `weekday` (1 Monday … 7 Sunday) of ISO week `week` of `year`: week 1 is the one with the
 * year's first Thursday, and a year has 53 weeks when it starts on a Thursday, or on a Wednesday in
 * a leap year. The day may fall in the year before or after (2026-W01-1 is 2025-12-29).
 */
function weekDate(year: number, week: number, weekday: number): Date | undefined {
  const january1 = (dayOfYear(year, 1)!.getUTCDay() + 6) % 7; // 0 Monday … 6 Sunday
  const weeks = january1 === 3 || (january1 === 2 && isLeap(year)) ? 53 : 52;
  if (week < 1 || week > weeks || weekday < 1 || weekday > 7) return undefined;
  // Monday of week 1 is January 1 less its weekday when that is Monday to Thursday, else the next.
  const monday1 = 1 - january1 + (january1 > 3 ? 7 : 0);
  const date = new Date(0);
  date.setUTCFullYear(year, 0, monday1 + (week - 1) * 7 + (weekday - 1));
  return date;
}

function isLeap(year: number): boolean {
  return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
}

/**
 * An ISO 8601 date-time with an offset (any: calendar, ordinal or week date, extended or basic form,
 * minutes and seconds optional), that exists (no 24:30, no 2027-02-29), in years 1900 to 9999 as
 * written; parsed to a Date (`parseIsoDateTime`).
 * Documented as `date-time`, the RFC 3339 profile every example uses.
 */
export const DateTimeInput = storable(z.string())
  .transform((value, ctx) => {
    const instant = parseIsoDateTime(value);
    const message = !instant
      ? 'must be an ISO 8601 date-time that exists, with an offset, e.g. 2026-11-22T18:30:00Z'
      : !yearInRange(value)
        ? yearMessage
        : undefined;
    if (message === undefined) return instant!;
    ctx.addIssue({ code: 'custom', message });
    return z.NEVER;
  })
  .meta({ format: 'date-time' });

/**
 * A whole number written in digits (a CLI flag, an environment variable): `Number()` alone would
 * take `1e3`, `0x50` or ` 80`.
 */
export function wholeNumberText(min: number, max: number) {
  return z
    .string()
    .regex(/^\d{1,15}$/, 'must be a whole number')
    .transform(Number)
    .pipe(z.number().min(min, `must be at least ${min}`).max(max, `must be at most ${max}`))
    .meta({ description: `a whole number, ${min} to ${max}` });
}

/**
 * A whole number in a query string: digits only (no `1e1`, `0x10`, spaces or signs, which a plain
 * `Number()` would accept), then bounded. Documented as an integer.
 */
export function queryInteger(min: number, max: number) {
  return z.preprocess(
    (value) => (typeof value === 'string' && /^\d{1,15}$/.test(value) ? Number(value) : value),
    z.number({ error: 'must be a whole number' }).int().min(min).max(max),
  );
}

/**
 * An absolute http(s) URI as RFC 3986 writes it: ASCII only, no spaces, control characters or
 * lone surrogates (the WHATWG parser behind `new URL()` would silently strip or escape those), a
 * host, a port other than 0, and no credentials.
 */
export function httpUrl(maxLength: number) {
  return storable(z.string().max(maxLength)).superRefine((value, ctx) => {
    const problem = urlProblem(value);
    if (problem) ctx.addIssue({ code: 'custom', message: problem });
  });
}

/** The characters RFC 3986 allows in a URI, `%` included for its escapes. */
const URI_CHARACTERS = /^[A-Za-z0-9\-._~:/?#[\]@!$&'()*+,;=%]*$/;

function urlProblem(value: string): string | undefined {
  if (!URI_CHARACTERS.test(value) || /%(?![0-9A-Fa-f]{2})/.test(value)) {
    return 'must be an absolute URI of ASCII characters (no spaces or control characters; escape others as %XX)';
  }
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return 'must be an absolute http(s) URL';
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return 'must be an absolute http(s) URL';
  if (!/^https?:\/\/[^/?#]/i.test(value) || !url.hostname) return 'must name a host';
  // Empty credentials (`https://:@host/`) are credentials too: the URL parser drops them, the stored
  // endpoint_url would keep them.
  const authority = value.slice(value.indexOf('//') + 2).split(/[/?#]/, 1)[0]!;
  if (authority.includes('@')) return 'must not carry credentials';
  // Nothing listens on port 0: no delivery could ever connect (the URL parser accepts it).
  if (url.port === '0') return 'must name a port from 1 to 65535';
  return undefined;
}
