/**
 * The claim of due webhook attempts ranks each subscription's oldest due attempts (db/queries/
 * webhook-deliveries.ts: claimDue), found by subscription: the index of named attempts leads with
 * the subscription, in place of the one by due time alone, which only that claim read.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    create index webhook_deliveries_named_idx on webhook_deliveries (subscription_id, next_attempt_at)
      where next_attempt_id is not null;
    drop index webhook_deliveries_due_idx;
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    create index webhook_deliveries_due_idx on webhook_deliveries (next_attempt_at)
      where next_attempt_id is not null;
    drop index webhook_deliveries_named_idx;
  `);
}
