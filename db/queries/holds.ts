/** Queries on `holds`. Status changes are conditional updates, so each happens at most once. */
import { traceSetting } from '../platform/tracing.ts';
import { datesIn, type DatabaseWrite } from './database-write.ts';
import type { Knex } from '../postgres/knex.ts';
import { runStatement } from '../postgres/statement.ts';

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
  /** The hold group it is one of, and its place in it; null for a single hold. */
  hold_group_id: string | null;
  item_index: number | null;
  /** The series a grouped hold is an occurrence of, and which; null otherwise. */
  series_id: string | null;
  series_occurrence_index: number | null;
}

/** A hold as the database function places it: what the partner asked for, checked there. */
export interface HoldPlacement {
  partnerId: string;
  idempotencyKey: string;
  fingerprint: string;
  venueId: string;
  /** Null when the id given cannot be a resource's (not a UUID): no such resource. */
  resourceId: string | null;
  slotStart: Date;
  durationMinutes: number;
  customerPhone: string | null;
}

/**
 * Places a hold in one statement, its own transaction (`place_hold()`, db/functions/place_hold.sql):
 * the idempotency claim, the checks, the reservations under the window lock, hold_created and the
 * expiry job, which carry the trace in scope (db/platform/tracing.ts). A refusal is thrown as a
 * PB000 error (`refusalOf()`). The result is the hold's JSON (`holdFromJson()` revives it), or a
 * key's record of any operation.
 */
export async function place(db: Knex, hold: HoldPlacement): Promise<DatabaseWrite> {
  const { rows } = await runStatement<DatabaseWrite>(
    db,
    'select * from place_hold(?::text, ?, ?, ?, ?, ?, ?, ?, ?)',
    [
      traceSetting(),
      hold.partnerId,
      hold.idempotencyKey,
      hold.fingerprint,
      hold.venueId,
      hold.resourceId,
      hold.slotStart,
      hold.durationMinutes,
      hold.customerPhone,
    ],
  );
  return rows[0]!;
}

/** A hold row from its JSON (`to_jsonb(h)`): timestamps become Dates, as the driver makes them. */
export function holdFromJson(json: Record<string, unknown>): HoldRow {
  return datesIn(json, HOLD_TIMESTAMPS) as unknown as HoldRow;
}

const HOLD_TIMESTAMPS = [
  'slot_start',
  'slot_end',
  'hold_expiry_at',
  'created_at',
  'updated_at',
  'cancelled_at',
  'expired_at',
];

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

/**
 * Locks the caller's hold and reads its expiry, venue authorisation and reservations; undefined
 * when it is not the caller's (another partner's row is never locked).
 */
export async function lockForChange(
  trx: Knex,
  id: string,
  partnerId: string,
): Promise<HoldForChange | undefined> {
  const { rows } = await trx.raw<{ rows: HoldForChange[] }>(
    `select h.*, hold_is_expired(h) as expired, venue_authorized(?, h.venue_id) as venue_authorized,
            hold_is_intact(h) as intact
       from holds h where h.id = ? and h.partner_id = ? for update of h`,
    [partnerId, id, partnerId],
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

/** A group's holds that are ACTIVE and due → EXPIRED, in item order; the rows this call changed. */
export async function expireDueInGroup(trx: Knex, groupId: string): Promise<HoldRow[]> {
  return trx<HoldRow>('holds')
    .where({ hold_group_id: groupId, status: 'ACTIVE' })
    .where('hold_expiry_at', '<=', trx.fn.now())
    .update({ status: 'EXPIRED', expired_at: trx.fn.now(), updated_at: trx.fn.now() })
    .returning('*')
    .then((rows) => rows.sort((a, b) => a.item_index! - b.item_index!));
}

/** A group's ACTIVE holds → CANCELLED (its release), in item order; the rows this call changed. */
export async function cancelGroup(trx: Knex, groupId: string, reason: string | null): Promise<HoldRow[]> {
  return trx<HoldRow>('holds')
    .where({ hold_group_id: groupId, status: 'ACTIVE' })
    .update({
      status: 'CANCELLED',
      cancelled_at: trx.fn.now(),
      cancel_reason: reason,
      updated_at: trx.fn.now(),
    })
    .returning('*')
    .then((rows) => rows.sort((a, b) => a.item_index! - b.item_index!));
}
