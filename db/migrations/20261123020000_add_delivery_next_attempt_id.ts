/**
 * Names a delivery's next attempt before it runs. The id is made when the attempt is scheduled (at
 * fan-out, after a failed attempt, on redelivery), stored here, and carried by the one job that is
 * to run it; claiming the attempt clears it. So a job can only run the attempt it was queued for:
 * a duplicate or stale job (a retried batch, an expired job, a job of an earlier redelivery round)
 * finds another id, or none, and runs nothing. The id becomes the attempt's `webhook_attempts.id`,
 * the `delivery_id` the partner sees.
 *
 * Existing rows keep null: their queued jobs carry only `delivery_id`, and such a job may claim an
 * attempt only while `next_attempt_id` is null (see `claimAttempt`).
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw('alter table webhook_deliveries add column next_attempt_id uuid');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('alter table webhook_deliveries drop column next_attempt_id');
}
