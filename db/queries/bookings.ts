/** Queries on `bookings`. Status changes are conditional updates, so each happens at most once. */
import { traceSetting } from '../platform/tracing.ts';
import { datesIn, type DatabaseWrite } from './database-write.ts';
import type { Knex } from '../postgres/knex.ts';
import { runStatement } from '../postgres/statement.ts';

export type BookingStatus = 'BOOKED' | 'CANCELLED' | 'REFUNDED';

/** A row of `bookings`. */
export interface BookingRow {
  id: string;
  hold_id: string;
  partner_id: string;
  venue_id: string;
  resource_id: string;
  slot_id: string;
  slot_start: Date;
  slot_end: Date;
  status: BookingStatus;
  booked_at: Date;
  price_rupees: number;
  payment_reference: string;
  payment_method: string | null;
  package_purchase_id: string | null;
  customer_name: string;
  customer_phone: string;
  customer_email: string | null;
  cancelled_at: Date | null;
  cancel_reason: string | null;
  refunded_at: Date | null;
  refund_reason: string | null;
  /** The hold group it was confirmed with, and the series that group holds; null otherwise. */
  hold_group_id: string | null;
  series_id: string | null;
  /** Which occurrence of its series it is; null outside a series. */
  series_occurrence_index: number | null;
}

/** A confirm as the database function makes it: what the partner asked for, checked there. */
export interface HoldConfirmation {
  partnerId: string;
  idempotencyKey: string;
  fingerprint: string;
  holdId: string;
  paymentReference: string;
  customerName: string;
  customerPhone: string;
  customerEmail: string | null;
  /** Null when the request did not say. */
  usePackageCredit: boolean | null;
}

/** What a confirm made: the booking, and whether a package credit paid (null: not asked). */
export interface ConfirmedBooking {
  booking: BookingRow;
  package_credit_consumed: boolean | null;
}

/**
 * Confirms a hold in one statement, its own transaction (`confirm_hold()`,
 * db/functions/confirm_hold.sql): the idempotency claim, the hold locked and checked, a package
 * credit when asked, the booking and booking_created, carrying the trace in scope. A refusal is
 * thrown as a PB000 error (`refusalOf()`). The result is the confirm's JSON
 * (`confirmedBookingFromJson()` revives it), or a key's record of any operation.
 */
export async function confirm(db: Knex, c: HoldConfirmation): Promise<DatabaseWrite> {
  const { rows } = await runStatement<DatabaseWrite>(
    db,
    'select * from confirm_hold(?::text, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
    [
      traceSetting(),
      c.partnerId,
      c.idempotencyKey,
      c.fingerprint,
      c.holdId,
      c.paymentReference,
      c.customerName,
      c.customerPhone,
      c.customerEmail,
      c.usePackageCredit,
    ],
  );
  return rows[0]!;
}

/** A confirm from its JSON (what confirm_hold() stores). */
export function confirmedBookingFromJson(json: Record<string, unknown>): ConfirmedBooking {
  return {
    ...(json as unknown as ConfirmedBooking),
    booking: bookingFromJson(json.booking as Record<string, unknown>),
  };
}

const BOOKING_TIMESTAMPS = ['slot_start', 'slot_end', 'booked_at', 'cancelled_at', 'refunded_at'];

/** A booking row from its JSON: timestamps become Dates, as the driver makes them. */
export function bookingFromJson(json: Record<string, unknown>): BookingRow {
  return datesIn(json, BOOKING_TIMESTAMPS) as unknown as BookingRow;
}

/** A booking by id. */
export async function findById(db: Knex, id: string): Promise<BookingRow | undefined> {
  return db<BookingRow>('bookings').where({ id }).first();
}

/**
 * The caller's booking locked for a change, with whether its venue is still authorised for
 * `partnerId`; undefined when it is not the caller's (another partner's row is never locked).
 */
export async function lockForChange(
  trx: Knex,
  id: string,
  partnerId: string,
): Promise<(BookingRow & { venue_authorized: boolean }) | undefined> {
  const { rows } = await trx.raw<{ rows: (BookingRow & { venue_authorized: boolean })[] }>(
    `select b.*, venue_authorized(?, b.venue_id) as venue_authorized
       from bookings b where b.id = ? and b.partner_id = ? for update of b`,
    [partnerId, id, partnerId],
  );
  return rows[0];
}

/** BOOKED → CANCELLED; the row if this call made the change. */
export async function cancel(trx: Knex, id: string, reason: string | null): Promise<BookingRow | undefined> {
  const [row] = await trx<BookingRow>('bookings')
    .where({ id, status: 'BOOKED' })
    .update({ status: 'CANCELLED', cancelled_at: trx.fn.now(), cancel_reason: reason })
    .returning('*');
  return row;
}

/** BOOKED or CANCELLED → REFUNDED; the row if this call made the change. */
export async function refund(trx: Knex, id: string, reason: string | null): Promise<BookingRow | undefined> {
  const [row] = await trx<BookingRow>('bookings')
    .where({ id })
    .whereIn('status', ['BOOKED', 'CANCELLED'])
    .update({ status: 'REFUNDED', refunded_at: trx.fn.now(), refund_reason: reason })
    .returning('*');
  return row;
}

/** Filters of GET /bookings; dates are venue-local dates of the slot, inclusive. */
export interface BookingFilters {
  venueId?: string | undefined;
  from?: string | undefined;
  to?: string | undefined;
  customerPhone?: string | undefined;
  customerName?: string | undefined;
  /** Only the bookings of this series (none when it is not the partner's). */
  seriesId?: string | undefined;
  /** Only bookings after this one in the list's order (a booking of the partner's). */
  startingAfter?: string | undefined;
  limit: number;
}

/**
 * A partner's bookings, newest booked_at first (then id), at most `limit`. Pages are keyset:
 * after `startingAfter`'s position in that order, read from bookings_partner_booked_idx; the
 * position is compared in SQL, at the column's microseconds.
 */
export function listForPartner(db: Knex, partnerId: string, filters: BookingFilters): Promise<BookingRow[]> {
  const query = db<BookingRow>({ b: 'bookings' })
    .select('b.*')
    .join({ v: 'venues' }, 'v.id', 'b.venue_id')
    .where('b.partner_id', partnerId)
    .orderBy([
      { column: 'b.booked_at', order: 'desc' },
      { column: 'b.id', order: 'desc' },
    ])
    .limit(filters.limit);
  if (filters.venueId) void query.where('b.venue_id', filters.venueId);
  if (filters.from)
    void query.whereRaw('(b.slot_start at time zone v.timezone)::date >= ?::date', [filters.from]);
  if (filters.to)
    void query.whereRaw('(b.slot_start at time zone v.timezone)::date <= ?::date', [filters.to]);
  if (filters.customerPhone) void query.where('b.customer_phone', filters.customerPhone);
  if (filters.seriesId) void query.where('b.series_id', filters.seriesId);
  if (filters.startingAfter) {
    void query.whereRaw('(b.booked_at, b.id) < (select c.booked_at, c.id from bookings c where c.id = ?)', [
      filters.startingAfter,
    ]);
  }
  if (filters.customerName) {
    void query.whereRaw("b.customer_name ilike '%' || ? || '%' escape '\\'", [
      escapeLike(filters.customerName),
    ]);
  }
  return query;
}

function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, (c) => `\\${c}`);
}
