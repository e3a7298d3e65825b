/** Queries on `holds`. Status changes are conditional updates, so each happens at most once. */
import type { EventLog } from './events.ts';
import type { Knex } from '../postgres/knex.ts';

export type HoldStatus = 'ACTIVE' | 'CANCELLED' | 'EXPIRED' | 'CONFIRMED';

/** A row of `holds`. */
export interface HoldRow {
  id: string;
  partner_id: string;
  venue_id: string;
  resource_id: string;
  slot_id: string;
  slot_start: Date;
  slot_end: Date;
  status: HoldStatus;
  hold_expiry_at: Date;
  price_rupees: number;
  customer_phone: string | null;
  /** The membership discount the price includes; 0 when none. */
  discount_percent: number;
  created_at: Date;
  updated_at: Date;
  cancelled_at: Date | null;
  cancel_reason: string | null;
  expired_at: Date | null;
}

/** The fields of a new hold; its expiry is `now() + holdSeconds` on the database clock. */
export interface NewHold {
  partnerId: string;
  venueId: string;
  resourceId: string;
  slotStart: Date;
  slotEnd: Date;
  holdSeconds: number;
  priceRupees: number;
  customerPhone: string | null;
  discountPercent: number;
}

/**
 * Inserts an ACTIVE hold together with its reservations, one per physical unit, and its
 * hold_created event, in one statement (the exclusion constraint checks the reservations as they
 * go in). Returns the hold and the id of its event.
 */
export async function insertWithReservations(
  trx: Knex,
  events: EventLog,
  hold: NewHold,
  unitIds: string[],
): Promise<HoldRow & { event_id: string }> {
  const { rows } = await trx.raw<{ rows: (HoldRow & { event_id: string })[] }>(
    `with h as (
       insert into holds (partner_id, venue_id, resource_id, slot_id, slot_start, slot_end, hold_expiry_at,
                          price_rupees, customer_phone, discount_percent)
       values (?, ?, ?, slot_id(?, ?), ?, ?, now() + make_interval(secs => ?), ?, ?, ?)
       returning *
     ), r as (
       insert into reservations (hold_id, unit_id, resource_id, during, expires_at)
       select h.id, unit_id, h.resource_id, tstzrange(h.slot_start, h.slot_end), h.hold_expiry_at
       from h cross join unnest(?::uuid[]) as unit_id
     ), e as (
       ${events.holdEvents('h', 'hold_created')}
     )
     select h.*, (select id from e) as event_id from h`,
    [
      hold.partnerId,
      hold.venueId,
      hold.resourceId,
      hold.resourceId,
      hold.slotStart,
      hold.slotStart,
      hold.slotEnd,
      hold.holdSeconds,
      hold.priceRupees,
      hold.customerPhone,
      hold.discountPercent,
      unitIds,
    ],
  );
  events.recorded(rows.map((r) => r.event_id));
  return rows[0]!;
}

/** A hold by id. */
export async function findById(db: Knex, id: string): Promise<HoldRow | undefined> {
  return db<HoldRow>('holds').where({ id }).first();
}

/** A hold locked for a change by `partnerId`, with what the change must check, in one round trip. */
export interface HoldForChange extends HoldRow {
  /** EXPIRED, or ACTIVE with hold_expiry_at passed on the database clock (its job not run yet). */
  expired: boolean;
  /** The venue is granted to `partnerId` and not archived. */
  venue_authorized: boolean;
  /** Every unit of the hold's resource still has its live reservation. */
  intact: boolean;
}

/** Locks a hold and reads its expiry, venue authorisation and reservations. */
export async function lockForChange(
  trx: Knex,
  id: string,
  partnerId: string,
): Promise<HoldForChange | undefined> {
  const { rows } = await trx.raw<{ rows: HoldForChange[] }>(
    `select h.*, h.status = 'EXPIRED' or (h.status = 'ACTIVE' and h.hold_expiry_at <= now()) as expired,
            venue_authorized(?, h.venue_id) as venue_authorized,
            (select count(*) from reservations rv where rv.hold_id = h.id and reservation_is_live(rv))
              = cardinality(resource_units(h.resource_id)) as intact
       from holds h where h.id = ? for update of h`,
    [partnerId, id],
  );
  return rows[0];
}

/** ACTIVE and due → EXPIRED; the row if this call made the change, else undefined. */
export async function expireIfDue(trx: Knex, id: string): Promise<HoldRow | undefined> {
  const [row] = await trx<HoldRow>('holds')
    .where({ id, status: 'ACTIVE' })
    .where('hold_expiry_at', '<=', trx.fn.now())
    .update({ status: 'EXPIRED', expired_at: trx.fn.now(), updated_at: trx.fn.now() })
    .returning('*');
  return row;
}

/** ACTIVE → CANCELLED (a release); the row if this call made the change. */
export async function cancel(trx: Knex, id: string, reason: string | null): Promise<HoldRow | undefined> {
  const [row] = await trx<HoldRow>('holds')
    .where({ id, status: 'ACTIVE' })
    .update({
      status: 'CANCELLED',
      cancelled_at: trx.fn.now(),
      cancel_reason: reason,
      updated_at: trx.fn.now(),
    })
    .returning('*');
  return row;
}
