/**
 * Two indexes of `events` that no statement reads: (hold_id) and (booking_id), from the first
 * schema. Events are found by id, by venue in commit order, by venue and type, and by venue, type
 * and time (db/queries/events.ts); the freed window of a waitlist promotion joins its event's hold
 * by the hold's key. Every event paid for both: two of the ~28 index entries and ~300 of the ~8,300
 * bytes of WAL a hold → confirm cycle writes (docs/BENCHMARKS.md, ninth session).
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    drop index events_hold_idx;
    drop index events_booking_idx;
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    create index events_hold_idx on events (hold_id);
    create index events_booking_idx on events (booking_id);
  `);
}
