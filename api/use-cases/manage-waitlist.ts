/**
 * The waitlist: join (naturally idempotent on venue, resource, date and customer; a repeat sets
 * the entry back to waiting with a fresh expiry), list, and cancel. A join checks the venue grant
 * (403) and that the resource is the venue's and the date not past (400), and schedules the
 * entry's expiry in its transaction.
 */
import type { PgBoss } from 'pg-boss';
import { enqueue } from '../../db/jobs/enqueue.ts';
import { WAITLIST_EXPIRE } from '../../db/jobs/kinds.ts';
import type { Knex } from '../../db/postgres/knex.ts';
import { transaction } from '../../db/postgres/transaction.ts';
import * as waitlist from '../../db/queries/waitlist-entries.ts';
import { InvalidFieldError, VenueNotAuthorizedError, WaitlistEntryNotFoundError } from '../errors.ts';

/** A join, as the partner asked for it (the phone already in +91XXXXXXXXXX form). */
export interface WaitlistJoin {
  venue_id: string;
  resource_id: string;
  /** YYYY-MM-DD, venue-local. */
  slot_date: string;
  customer_phone: string;
  customer_name?: string | null | undefined;
  expires_in_days: number;
}

/** Joins (or re-joins) the waitlist for the caller's customer. */
export async function joinWaitlist(
  { db, boss }: { db: Knex; boss: PgBoss },
  partnerId: string,
  input: WaitlistJoin,
): Promise<waitlist.WaitlistEntryRow> {
  const target = await waitlist.joinTarget(db, partnerId, input.venue_id, input.resource_id, input.slot_date);
  if (!target.venue_authorized) throw new VenueNotAuthorizedError();
  if (!target.resource_of_venue) {
    throw new InvalidFieldError('resource_id', 'is not a resource of this venue (copy it from discovery)');
  }
  if (!target.date_not_past) throw new InvalidFieldError('slot_date', 'is in the past at the venue');
  return transaction(db, async (trx) => {
    const entry = await waitlist.join(trx, {
      partnerId,
      venueId: input.venue_id,
      resourceId: input.resource_id,
      slotDate: input.slot_date,
      customerPhone: input.customer_phone,
      customerName: input.customer_name ?? null,
      expiresInDays: input.expires_in_days,
    });
    const payload = { entry_id: entry.id, expires_at: entry.expires_at.toISOString() };
    await enqueue(boss, trx, WAITLIST_EXPIRE, payload, { startAfter: entry.expires_at });
    return entry;
  });
}

/** The caller's entries for a venue, resource and date, oldest first. */
export function listWaitlist(
  db: Knex,
  partnerId: string,
  filters: waitlist.WaitlistFilters,
): Promise<waitlist.WaitlistEntryRow[]> {
  return waitlist.listOwn(db, partnerId, filters);
}

/** Cancels the caller's entry (kept, status cancelled); repeating it changes nothing. */
export function cancelWaitlistEntry(db: Knex, partnerId: string, entryId: string): Promise<void> {
  return transaction(db, async (trx) => {
    const entry = await waitlist.lockOwn(trx, partnerId, entryId);
    if (!entry) throw new WaitlistEntryNotFoundError();
    if (!entry.venue_authorized) throw new VenueNotAuthorizedError();
    await waitlist.cancel(trx, entry.id);
  });
}
