/**
 * Queries on `waitlist_entries` and `waitlist_promotions`. Every transition is a conditional
 * update, so a job that runs twice, late or after a re-join changes nothing it should not.
 */
import type { Knex } from '../postgres/knex.ts';
import { traceSetting } from '../platform/tracing.ts';
import { isUuid } from './resources.ts';

export const WAITLIST_STATUSES = ['waiting', 'promoted', 'expired', 'cancelled'] as const;
export type WaitlistStatus = (typeof WAITLIST_STATUSES)[number];

/** A waitlist entry as the API shows it. */
export interface WaitlistEntryRow {
  id: string;
  partner_id: string;
  venue_id: string;
  resource_id: string;
  /** YYYY-MM-DD, venue-local. */
  slot_date: string;
  customer_phone: string;
  customer_name: string | null;
  status: WaitlistStatus;
  slot_id: string | null;
  promoted_at: Date | null;
  expires_at: Date;
  created_at: Date;
  updated_at: Date;
}

/**
 * The status as shown: a waiting entry past its expires_at is expired, whether or not its
 * `waitlist.expire` job has run yet (the job makes it so in the row).
 */
const SHOWN_STATUS =
  "case when w.status = 'waiting' and w.expires_at <= now() then 'expired' else w.status end";
const COLUMNS = `w.id, w.partner_id, w.venue_id, w.resource_id, w.slot_date, w.customer_phone, w.customer_name,
  ${SHOWN_STATUS} as status, w.slot_id, w.promoted_at, w.expires_at, w.created_at, w.updated_at`;

/** A join of the waitlist. */
export interface Join {
  partnerId: string;
  venueId: string;
  resourceId: string;
  slotDate: string;
  customerPhone: string;
  customerName: string | null;
  expiresInDays: number;
}

/**
 * Joins the waitlist, or re-joins it: the partner's entry for this venue, resource, date and
 * customer is created, or set back to waiting with a fresh expires_at (its id and place in the
 * queue kept; a name sent now replaces the old one). Parallel joins meet on the unique key.
 * expires_at is whole milliseconds, so the expiry job can name it exactly.
 */
export async function join(trx: Knex, entry: Join): Promise<WaitlistEntryRow> {
  const { rows } = await trx.raw<{ rows: WaitlistEntryRow[] }>(
    `insert into waitlist_entries as w (partner_id, venue_id, resource_id, slot_date, customer_phone, customer_name,
                                        expires_at)
     values (?, ?, ?, ?, ?, ?, date_trunc('milliseconds', now() + make_interval(days => ?)))
     on conflict (partner_id, venue_id, resource_id, slot_date, customer_phone) do update
       set status = 'waiting', expires_at = excluded.expires_at,
           customer_name = coalesce(excluded.customer_name, w.customer_name),
           slot_id = null, promoted_at = null, updated_at = now()
     returning ${COLUMNS}`,
    [
      entry.partnerId,
      entry.venueId,
      entry.resourceId,
      entry.slotDate,
      entry.customerPhone,
      entry.customerName,
      entry.expiresInDays,
    ],
  );
  return rows[0]!;
}

/** Filters of GET /waitlist. */
export interface WaitlistFilters {
  venueId: string;
  resourceId: string;
  slotDate: string;
  status?: WaitlistStatus | undefined;
}

/** The partner's entries for a venue, resource and date, oldest first (none for a non-uuid resource id). */
export async function listOwn(
  db: Knex,
  partnerId: string,
  filters: WaitlistFilters,
): Promise<WaitlistEntryRow[]> {
  if (!isUuid(filters.resourceId)) return [];
  const bindings = [partnerId, filters.venueId, filters.resourceId, filters.slotDate];
  const byStatus = filters.status ? `and ${SHOWN_STATUS} = ?` : '';
  const { rows } = await db.raw<{ rows: WaitlistEntryRow[] }>(
    `select ${COLUMNS} from waitlist_entries w
      where w.partner_id = ? and w.venue_id = ? and w.resource_id = ? and w.slot_date = ? ${byStatus}
      order by w.created_at, w.id`,
    filters.status ? [...bindings, filters.status] : bindings,
  );
  return rows;
}

/** The partner's entry, locked, with whether its venue is still granted to the partner. */
export async function lockOwn(
  trx: Knex,
  partnerId: string,
  id: string,
): Promise<{ id: string; venue_authorized: boolean } | undefined> {
  const { rows } = await trx.raw<{ rows: { id: string; venue_authorized: boolean }[] }>(
    `select id, venue_authorized(partner_id, venue_id) as venue_authorized
       from waitlist_entries where id = ? and partner_id = ? for update`,
    [id, partnerId],
  );
  return rows[0];
}

/** Any status → cancelled (the entry is kept); a cancelled entry stays as it is. */
export async function cancel(trx: Knex, id: string): Promise<void> {
  await trx('waitlist_entries')
    .where({ id })
    .whereNot({ status: 'cancelled' })
    .update({ status: 'cancelled', updated_at: trx.fn.now() });
}

/**
 * waiting → expired, if the entry still has the expires_at the job was scheduled for and it has
 * passed. 'expired' when this call expired it, 'not-due' when that expiry is still ahead, and
 * 'settled' when there is nothing to do (re-joined with a later expiry, promoted, cancelled).
 */
export async function expireIfDue(
  db: Knex,
  id: string,
  expiresAt: Date,
): Promise<'expired' | 'not-due' | 'settled'> {
  const { rows } = await db.raw<{ rows: { outcome: 'expired' | 'not-due' | 'settled' }[] }>(
    `with e as (
       update waitlist_entries set status = 'expired', updated_at = now()
        where id = ? and status = 'waiting' and expires_at = ? and expires_at <= now()
        returning id
     )
     select case when exists (select 1 from e) then 'expired'
                 when exists (select 1 from waitlist_entries
                               where id = ? and status = 'waiting' and expires_at = ?) then 'not-due'
                 else 'settled' end as outcome`,
    [id, expiresAt, id, expiresAt],
  );
  return rows[0]!.outcome;
}

/** The window a freeing event freed: its hold's resource and times, and its venue-local date. */
export interface FreedWindow {
  event_id: string;
  venue_id: string;
  resource_id: string;
  slot_id: string;
  slot_start: Date;
  slot_end: Date;
  price_rupees: number;
  slot_date: string;
}

/** The event types that can free a window (a refund frees one only when the booking was BOOKED). */
const FREEING_EVENTS = ['hold_cancelled', 'hold_expired', 'booking_cancelled', 'booking_refunded'];

/** The window freed by the event `eventId` (every freeing event names its hold). */
export async function freedWindow(db: Knex, eventId: string): Promise<FreedWindow | undefined> {
  const { rows } = await db.raw<{ rows: FreedWindow[] }>(
    `select e.id as event_id, h.venue_id, h.resource_id, h.slot_id, h.slot_start, h.slot_end, h.price_rupees,
            (h.slot_start at time zone v.timezone)::date as slot_date
       from events e join holds h on h.id = e.hold_id join venues v on v.id = h.venue_id
      where e.id = ? and e.event_type = any (?)`,
    [eventId, FREEING_EVENTS],
  );
  return rows[0];
}

/**
 * Serialises the promotions of one resource and date until the transaction ends, so two windows
 * freed at once promote the oldest entry and the next, never the same one twice.
 */
export async function lockQueue(trx: Knex, window: FreedWindow): Promise<void> {
  await trx.raw("select pg_advisory_xact_lock(hashtextextended('waitlist:' || ? || ':' || ?, 0))", [
    window.resource_id,
    window.slot_date,
  ]);
}

/**
 * Promotes the oldest waiting, unexpired entry of the window's resource and date, of a partner
 * still granted the venue, to the window's first slot, and records the promotion under the
 * window's event (once per event, ever) with its waitlist_promoted event. Nothing happens when
 * the event already promoted an entry, the window has started, or it is no longer free (taken
 * again at once, as when a new hold expired the old one). Call with the queue locked.
 */
export async function promoteOldest(
  trx: Knex,
  window: FreedWindow,
): Promise<(WaitlistEntryRow & { event_id: string }) | undefined> {
  const { rows } = await trx.raw<{ rows: (WaitlistEntryRow & { event_id: string })[] }>(
    `with candidate as (
       select w.id from waitlist_entries w
        where w.venue_id = ? and w.resource_id = ? and w.slot_date = ?
          and w.status = 'waiting' and w.expires_at > now()
          and venue_authorized(w.partner_id, w.venue_id)
          and not exists (select 1 from waitlist_promotions where event_id = ?)
          and ?::timestamptz > now()
          and not exists (
            select 1 from reservations r
             where reservation_is_live(r)
               and r.unit_id = any (resource_units(w.resource_id)) and r.during && tstzrange(?, ?))
        order by w.created_at, w.id
        limit 1
        for update of w
     ), promoted as (
       update waitlist_entries w set status = 'promoted', promoted_at = now(), slot_id = ?, updated_at = now()
         from candidate c where w.id = c.id
       returning w.*
     ), recorded as (
       insert into waitlist_promotions (event_id, entry_id) select ?, id from promoted
     )
     select ${COLUMNS},
            record_waitlist_event(w::waitlist_entries, ?::timestamptz, ?::timestamptz, ?::integer, ?) as event_id
       from promoted w`,
    [
      window.venue_id,
      window.resource_id,
      window.slot_date,
      window.event_id,
      window.slot_start,
      window.slot_start,
      window.slot_end,
      window.slot_id,
      window.event_id,
      window.slot_start,
      window.slot_end,
      window.price_rupees,
      traceSetting(),
    ],
  );
  return rows[0];
}

/** What a join checks about its target, in one round trip. */
export interface JoinTarget {
  /** The venue exists, is not archived and is granted to the partner. */
  venue_authorized: boolean;
  /** The resource is one of the venue's. */
  resource_of_venue: boolean;
  /** The date is today or later at the venue. */
  date_not_past: boolean;
}

/** The checks of a join of `resourceId` at `venueId` on `slotDate` by `partnerId`. */
export async function joinTarget(
  db: Knex,
  partnerId: string,
  venueId: string,
  resourceId: string,
  slotDate: string,
): Promise<JoinTarget> {
  const { rows } = await db.raw<{ rows: JoinTarget[] }>(
    `select venue_authorized(?::uuid, ?::uuid) as venue_authorized,
            exists (select 1 from resources where id = ?::uuid and venue_id = ?::uuid) as resource_of_venue,
            coalesce((select ?::date >= (now() at time zone timezone)::date from venues where id = ?::uuid), false)
              as date_not_past`,
    // An id that is not a uuid names no resource (and must not reach the ::uuid cast).
    [partnerId, venueId, isUuid(resourceId) ? resourceId : null, venueId, slotDate, venueId],
  );
  return rows[0]!;
}
