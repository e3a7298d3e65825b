/** Queries on `holds`. Status changes are conditional updates, so each happens at most once. */
import { insertReturningId, type Knex } from '../knex.ts';

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
  slotId: string;
  slotStart: Date;
  slotEnd: Date;
  holdSeconds: number;
  priceRupees: number;
  customerPhone: string | null;
}

/** Inserts an ACTIVE hold and returns it. */
export async function insert(trx: Knex, hold: NewHold): Promise<HoldRow> {
  const id = await insertReturningId(trx, 'holds', {
    partner_id: hold.partnerId,
    venue_id: hold.venueId,
    resource_id: hold.resourceId,
    slot_id: hold.slotId,
    slot_start: hold.slotStart,
    slot_end: hold.slotEnd,
    hold_expiry_at: trx.raw('now() + make_interval(secs => ?)', [hold.holdSeconds]),
    price_rupees: hold.priceRupees,
    customer_phone: hold.customerPhone,
  });
  return (await findById(trx, id))!;
}

/** A hold by id. */
export async function findById(db: Knex, id: string): Promise<HoldRow | undefined> {
  return db<HoldRow>('holds').where({ id }).first();
}

/** A hold by id, locked for the rest of the transaction. */
export async function lockById(trx: Knex, id: string): Promise<HoldRow | undefined> {
  return trx<HoldRow>('holds').where({ id }).forUpdate().first();
}

/** Whether the hold is past its expiry on the database clock. */
export async function isPastExpiry(trx: Knex, hold: HoldRow): Promise<boolean> {
  const { rows } = await trx.raw<{ rows: { past: boolean }[] }>('select ?::timestamptz <= now() as past', [
    hold.hold_expiry_at,
  ]);
  return rows[0]!.past;
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

/** ACTIVE → CONFIRMED; the row if this call made the change. */
export async function confirm(trx: Knex, id: string): Promise<HoldRow | undefined> {
  const [row] = await trx<HoldRow>('holds')
    .where({ id, status: 'ACTIVE' })
    .update({ status: 'CONFIRMED', updated_at: trx.fn.now() })
    .returning('*');
  return row;
}
