/** Waitlist entries as the API shows them. */
import type { WaitlistEntryRow } from '../../db/queries/waitlist-entries.ts';
import type { WaitlistEntry } from '../schemas/waitlist.ts';

export function presentWaitlistEntry(w: WaitlistEntryRow): WaitlistEntry {
  return {
    id: w.id,
    venue_id: w.venue_id,
    resource_id: w.resource_id,
    slot_date: w.slot_date,
    slot_id: w.slot_id,
    customer_phone: w.customer_phone,
    customer_name: w.customer_name,
    partner_id: w.partner_id,
    status: w.status,
    promoted_at: w.promoted_at?.toISOString() ?? null,
    expires_at: w.expires_at.toISOString(),
    created_at: w.created_at.toISOString(),
    updated_at: w.updated_at.toISOString(),
  };
}
