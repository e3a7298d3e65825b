/** Queries on `bookings`. Status changes are conditional updates, so each happens at most once. */
import type { Knex } from '../knex.ts';

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
}

/** The fields of a new booking beyond those it takes from its hold. */
export interface NewBooking {
  paymentReference: string;
  paymentMethod: string | null;
  packagePurchaseId: string | null;
  customerName: string;
  customerPhone: string;
  customerEmail: string | null;
}

/** Books a confirmed hold and returns the booking. */
export async function insertFromHold(
  trx: Knex,
  hold: {
    id: string;
    partner_id: string;
    venue_id: string;
    resource_id: string;
    slot_id: string;
    slot_start: Date;
    slot_end: Date;
    price_rupees: number;
  },
  booking: NewBooking,
): Promise<BookingRow> {
  const [row] = await trx<BookingRow>('bookings')
    .insert({
      hold_id: hold.id,
      partner_id: hold.partner_id,
      venue_id: hold.venue_id,
      resource_id: hold.resource_id,
      slot_id: hold.slot_id,
      slot_start: hold.slot_start,
      slot_end: hold.slot_end,
      price_rupees: hold.price_rupees,
      payment_reference: booking.paymentReference,
      payment_method: booking.paymentMethod,
      package_purchase_id: booking.packagePurchaseId,
      customer_name: booking.customerName,
      customer_phone: booking.customerPhone,
      customer_email: booking.customerEmail,
    })
    .returning('*');
  return row as BookingRow;
}

/** A booking by id. */
export async function findById(db: Knex, id: string): Promise<BookingRow | undefined> {
  return db<BookingRow>('bookings').where({ id }).first();
}

/** A booking by id, locked for the rest of the transaction. */
export async function lockById(trx: Knex, id: string): Promise<BookingRow | undefined> {
  return trx<BookingRow>('bookings').where({ id }).forUpdate().first();
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
  limit: number;
}

/** A partner's bookings, newest booked_at first. */
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
