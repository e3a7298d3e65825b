/**
 * A delivery names its next attempt only while it is pending or failed: delivered and dead-lettered
 * deliveries have none. Every writer already keeps this (publish, claim, outcome, takeover,
 * redelivery); the check makes it the schema's, because the claim relies on it: it finds due
 * attempts by `next_attempt_id` and time alone, in the due index's order (db/queries/
 * webhook-deliveries.ts, `claimDue`), without asking the status.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  // NOT VALID, then VALIDATE: the existing rows are checked without blocking writers.
  await knex.raw(`
    alter table webhook_deliveries add constraint webhook_deliveries_named_attempt_check
      check (next_attempt_id is null or status in ('pending', 'failed')) not valid;
    alter table webhook_deliveries validate constraint webhook_deliveries_named_attempt_check;
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('alter table webhook_deliveries drop constraint webhook_deliveries_named_attempt_check');
}
