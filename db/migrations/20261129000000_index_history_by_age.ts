/**
 * What retention.prune deletes is found by age: BRIN indexes on the time each history table is
 * written in order (events by occurred_at, delivery attempts by started_at, deliveries and
 * idempotency keys by created_at). A BRIN index is a few pages and costs an insert almost nothing
 * (these tables are written on every hold and confirm), and rows arrive roughly in time order, so
 * "older than 30 days" reads the old end of the table only.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    create index events_occurred_brin on events using brin (occurred_at);
    create index webhook_attempts_started_brin on webhook_attempts using brin (started_at);
    create index webhook_deliveries_created_brin on webhook_deliveries using brin (created_at);
    create index idempotency_keys_created_brin on idempotency_keys using brin (created_at);
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    drop index idempotency_keys_created_brin;
    drop index webhook_deliveries_created_brin;
    drop index webhook_attempts_started_brin;
    drop index events_occurred_brin;
  `);
}
