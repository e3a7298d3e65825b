/**
 * Two corrections to how events reach partners.
 *
 * An archived venue is invisible to every partner (CONTRACT.md), yet `publish_event()` fanned its
 * events out to every partner with a grant: an event recorded while a venue is archived (the
 * `hold_expired` of a hold made before) now goes to no subscription. It asks `venue_authorized()`,
 * the one definition of a partner's access to a venue, as the missed-event pull now does.
 *
 * `record_hold_event()` and `record_booking_event()` publish as they record, and the delivery jobs
 * they queue carry the transaction's `booking.trace`, which only the hold and confirm functions
 * set: the deliveries of a release, a cancel, a refund and an expiry lost the trace and request id of
 * what caused them. Each now takes the trace as a third argument, set before anything is queued.
 * The two-argument forms stay (a web process of the previous release calls them during a deploy).
 */
import type { Knex } from 'knex';
import { replaceInFunction } from '../postgres/function-definition.ts';

const PUBLISH_EVENT = 'publish_event(uuid)';

const EVERY_GRANT = `          join venue_grants g on g.venue_id = e.venue_id
          join webhook_subscriptions s on s.partner_id = g.partner_id
         where e.id = p_event_id and s.is_active and e.event_type = any (s.event_types)`;

const EVERY_ACCESS = `          join venue_grants g on g.venue_id = e.venue_id
          join webhook_subscriptions s on s.partner_id = g.partner_id
         where e.id = p_event_id and s.is_active and e.event_type = any (s.event_types)
           and venue_authorized(g.partner_id, e.venue_id)`;

const TRACED_RECORDERS = ['hold', 'booking']
  .map(
    (kind) => `
    create function record_${kind}_event(r ${kind}s, p_type text, p_trace text) returns uuid
    language plpgsql as $$
    begin
      if p_trace is not null then perform set_config('booking.trace', p_trace, true); end if;
      return record_${kind}_event(r, p_type);
    end
    $$;`,
  )
  .join('\n');

export async function up(knex: Knex): Promise<void> {
  await replaceInFunction(knex, PUBLISH_EVENT, EVERY_GRANT, EVERY_ACCESS);
  await knex.raw(TRACED_RECORDERS);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    drop function record_booking_event(bookings, text, text);
    drop function record_hold_event(holds, text, text);
  `);
  await replaceInFunction(knex, PUBLISH_EVENT, EVERY_ACCESS, EVERY_GRANT);
}
