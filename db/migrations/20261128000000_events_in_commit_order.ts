/**
 * Events in an order a reader can page through without missing one (GET /api/v1/events, the
 * missed-event pull of CONTRACT.md).
 *
 * `occurred_at` is the recording transaction's start, and a transaction that started earlier can
 * commit later: paging by it, a cursor can pass an instant before an event of that instant is
 * visible, and the event is never served. So each event also records the id of the transaction
 * that wrote it (`tx`, a 64-bit xid that never wraps) and its place among that transaction's
 * events (`seq`); the pull pages by (tx, seq) and serves only events of transactions older than
 * the oldest still running (`pg_snapshot_xmin` of its snapshot): every such transaction has ended,
 * and any event that becomes visible later belongs to a newer one, so it sorts after every event
 * already served. Events recorded before this migration keep tx 0, in the order they were stored.
 *
 * Indexes: (venue_id, tx, seq) serves the cursor one venue at a time, as deep as a partner's
 * history goes; (venue_id, occurred_at) finds the events at or after `since`.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    alter table events add column tx xid8 not null default '0';
    alter table events alter column tx set default pg_current_xact_id();
    alter table events add column seq bigint generated always as identity;
    create index events_venue_position_idx on events (venue_id, tx, seq);
    create index events_venue_occurred_idx on events (venue_id, occurred_at);
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    drop index events_venue_occurred_idx;
    drop index events_venue_position_idx;
    alter table events drop column seq;
    alter table events drop column tx;
  `);
}
