/**
 * The missed-event pull at any depth of history (GET /api/v1/events, db/queries/events.ts).
 *
 * - A rare `types` value read the venue's events in the pull's order and filtered them, so a page
 *   of booking_refunded cost the venue's whole history: (venue_id, event_type, tx, seq) reads each
 *   type in that order.
 * - `since` read from the earliest position of the venue forward, filtering by time. Events are
 *   found by time instead, per type, (venue_id, event_type, occurred_at), which also replaces
 *   (venue_id, occurred_at); and each event records when it was written (`recorded_at`, the clock at
 *   its insert), which bounds how far in time the first page of `since` can lie (see pullEvents).
 *   Events written before this migration have none, and bound nothing: they are read through.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    alter table events add column recorded_at timestamptz;
    alter table events alter column recorded_at set default clock_timestamp();
    create index events_venue_type_position_idx on events (venue_id, event_type, tx, seq);
    create index events_venue_type_occurred_idx on events (venue_id, event_type, occurred_at) include (recorded_at);
    drop index events_venue_occurred_idx;
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    create index events_venue_occurred_idx on events (venue_id, occurred_at);
    drop index events_venue_type_occurred_idx;
    drop index events_venue_type_position_idx;
    alter table events drop column recorded_at;
  `);
}
