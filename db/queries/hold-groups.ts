/**
 * Queries on `hold_groups`: several windows at one venue held all or nothing. A group is placed and
 * confirmed by one database function each (db/functions/place_hold_group.sql,
 * confirm_hold_group.sql); its release and expiry are conditional updates, so each happens at most
 * once. Its read is its row and its holds, each with its booking once confirmed (hold_group_json()).
 */
import { traceSetting } from '../platform/tracing.ts';
import type { Knex } from '../postgres/knex.ts';
import { bookingFromJson, type BookingRow } from './bookings.ts';
import { datesIn, type DatabaseWrite } from './database-write.ts';
import { holdFromJson, type HoldRow } from './holds.ts';

export type HoldGroupStatus = 'ACTIVE' | 'CONFIRMED' | 'CANCELLED' | 'EXPIRED';

/** A row of `hold_groups`. */
export interface HoldGroupRow {
  id: string;
  partner_id: string;
  venue_id: string;
  series_id: string | null;
  status: HoldGroupStatus;
  hold_expiry_at: Date;
  price_rupees: number;
  customer_phone: string | null;
  created_at: Date;
  updated_at: Date;
  confirmed_at: Date | null;
  cancelled_at: Date | null;
  cancel_reason: string | null;
  expired_at: Date | null;
}

/** A group with its holds in item order, each with its booking once it has one, as read at `read_at`. */
export interface HoldGroup {
  group: HoldGroupRow;
  holds: { hold: HoldRow; booking: BookingRow | null }[];
  /** The database's clock when it was read (what its derived statuses are judged at). */
  read_at: Date;
}

/** A confirmed group: the group as confirmed, and the credits it took when the confirm asked. */
export interface ConfirmedHoldGroup extends HoldGroup {
  /** N or 0 when the confirm carried `use_package_credit`; null when it did not. */
  package_credits_consumed: number | null;
}

/** One window of a group, as the partner asked for it (the API checked its shape). */
export interface GroupItem {
  resource_id: string;
  slot_start: Date;
  slot_duration_minutes: number;
}

/** A group as the database function places it. */
export interface HoldGroupPlacement {
  partnerId: string;
  idempotencyKey: string;
  fingerprint: string;
  venueId: string;
  items: readonly GroupItem[];
  customerPhone: string | null;
}

const GROUP_TIMESTAMPS = [
  'hold_expiry_at',
  'created_at',
  'updated_at',
  'confirmed_at',
  'cancelled_at',
  'expired_at',
];

/** A group from its JSON (hold_group_json()): timestamps become Dates, as the driver makes them. */
export function holdGroupFromJson(json: Record<string, unknown>): HoldGroup {
  const { group, holds, read_at } = json as {
    group: Record<string, unknown>;
    holds: { hold: Record<string, unknown>; booking: Record<string, unknown> | null }[];
    read_at: string;
  };
  return {
    read_at: new Date(read_at),
    group: datesIn(group, GROUP_TIMESTAMPS) as unknown as HoldGroupRow,
    holds: holds.map((h) => ({
      hold: holdFromJson(h.hold),
      booking: h.booking && bookingFromJson(h.booking),
    })),
  };
}

/** A confirmed group from its JSON (what confirm_hold_group() stores). */
export function confirmedHoldGroupFromJson(json: Record<string, unknown>): ConfirmedHoldGroup {
  return {
    ...holdGroupFromJson(json),
    package_credits_consumed: (json.package_credits_consumed as number | null | undefined) ?? null,
  };
}

/**
 * Places a group in one statement, its own transaction (place_hold_group()), with the trace in
 * scope. A refusal is thrown as a PB000 error (`refusalOf()`). The result is the group's JSON
 * (`holdGroupFromJson()` revives it), or a key's record of any operation.
 */
export async function place(db: Knex, p: HoldGroupPlacement): Promise<DatabaseWrite> {
  const items = p.items.map((i) => ({
    resource_id: i.resource_id,
    slot_start: instantText(i.slot_start),
    slot_duration_minutes: i.slot_duration_minutes,
  }));
  const { rows } = await db.raw<{ rows: DatabaseWrite[] }>(
    'select * from place_hold_group(?::text, ?, ?, ?, ?, ?::jsonb, ?)',
    [
      traceSetting(),
      p.partnerId,
      p.idempotencyKey,
      p.fingerprint,
      p.venueId,
      JSON.stringify(items),
      p.customerPhone,
    ],
  );
  return rows[0]!;
}

/**
 * An instant as PostgreSQL reads it, for JSON the database parses: `toISOString()` writes a year
 * past 9999 in ECMAScript's extended form (`+010000-01-01T04:00:00.000Z`, which an offset makes of
 * `9999-12-31T23:00:00-05:00`), which PostgreSQL refuses; it reads `10000-01-01T04:00:00.000Z`.
 */
function instantText(instant: Date): string {
  return instant.toISOString().replace(/^\+0*(?=\d{5,}-)/, '');
}

/** A group's confirm, as the partner asked for it (phones already in +91XXXXXXXXXX form). */
export interface HoldGroupConfirmation {
  partnerId: string;
  idempotencyKey: string;
  fingerprint: string;
  groupId: string;
  paymentReference: string;
  customerName: string;
  customerPhone: string;
  customerEmail: string | null;
  usePackageCredit: boolean | null;
}

/**
 * Confirms a group in one statement, its own transaction (confirm_hold_group()). The result is the
 * confirm's JSON (`confirmedHoldGroupFromJson()` revives it), or a key's record of any operation.
 */
export async function confirm(db: Knex, c: HoldGroupConfirmation): Promise<DatabaseWrite> {
  const { rows } = await db.raw<{ rows: DatabaseWrite[] }>(
    'select * from confirm_hold_group(?::text, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
    [
      traceSetting(),
      c.partnerId,
      c.idempotencyKey,
      c.fingerprint,
      c.groupId,
      c.paymentReference,
      c.customerName,
      c.customerPhone,
      c.customerEmail,
      c.usePackageCredit,
    ],
  );
  return rows[0]!;
}

/** A group as it is now, with its holds and bookings; undefined when there is none. */
export async function find(db: Knex, id: string): Promise<HoldGroup | undefined> {
  const { rows } = await db.raw<{ rows: { json: Record<string, unknown> | null }[] }>(
    'select hold_group_json(?) as json',
    [id],
  );
  const json = rows[0]?.json;
  return json ? holdGroupFromJson(json) : undefined;
}

/** A group locked for a change by `partnerId`, with what the change must check, in one round trip. */
export interface HoldGroupForChange extends HoldGroupRow {
  /** The venue is granted to `partnerId` and not archived. */
  venue_authorized: boolean;
  /** EXPIRED, or ACTIVE with hold_expiry_at passed on the database clock (its job not run yet). */
  expired: boolean;
}

/**
 * The caller's group locked for a change (see HoldGroupForChange); undefined when it is not the
 * caller's (another partner's row is never locked).
 */
export async function lockForChange(
  trx: Knex,
  id: string,
  partnerId: string,
): Promise<HoldGroupForChange | undefined> {
  const { rows } = await trx.raw<{ rows: HoldGroupForChange[] }>(
    `select g.*, venue_authorized(?, g.venue_id) as venue_authorized,
            g.status = 'EXPIRED' or (g.status = 'ACTIVE' and g.hold_expiry_at <= now()) as expired
       from hold_groups g where g.id = ? and g.partner_id = ? for update`,
    [partnerId, id, partnerId],
  );
  return rows[0];
}

/** Locks a group's row, for a change to it or its holds (every such change locks it first). */
export async function lock(trx: Knex, id: string): Promise<void> {
  await trx.raw('select 1 from hold_groups where id = ? for update', [id]);
}

/** ACTIVE → CANCELLED (its release). */
export async function markCancelled(trx: Knex, id: string, reason: string | null): Promise<void> {
  await trx('hold_groups').where({ id, status: 'ACTIVE' }).update({
    status: 'CANCELLED',
    cancelled_at: trx.fn.now(),
    cancel_reason: reason,
    updated_at: trx.fn.now(),
  });
}

/** ACTIVE and due → EXPIRED; whether this call made the change. */
export async function expireIfDue(trx: Knex, id: string): Promise<boolean> {
  const changed = await trx('hold_groups')
    .where({ id, status: 'ACTIVE' })
    .where('hold_expiry_at', '<=', trx.fn.now())
    .update({ status: 'EXPIRED', expired_at: trx.fn.now(), updated_at: trx.fn.now() });
  return changed > 0;
}

/** The group's status as read: an ACTIVE group reads EXPIRED from its hold_expiry_at on. */
export function shownStatus({ group, read_at }: HoldGroup): HoldGroupStatus {
  return group.status === 'ACTIVE' && group.hold_expiry_at.getTime() <= read_at.getTime()
    ? 'EXPIRED'
    : group.status;
}
