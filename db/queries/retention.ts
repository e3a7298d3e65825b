/**
 * Retention: the history older than a cutoff, deleted one small batch per statement (each its own
 * short transaction, so no lock is held for long and a running service does not notice). Order
 * matters: attempts, then finished deliveries, then events no delivery refers to any more (an
 * event with a delivery still under way stays until it is finished and old), then idempotency keys.
 *
 * Each delete states its conditions on the rows it deletes, not only in the subquery that picks
 * them: a row changed meanwhile (a dead letter redelivered while the batch waited for its lock) is
 * checked again as it now is, and kept. PostgreSQL re-checks a DELETE's own conditions on a row
 * another transaction updated, never those of an `id in (…)` list already made.
 */
import type { Knex } from '../postgres/knex.ts';

/** Rows one call deleted, by table. */
export interface PrunedBatch {
  webhook_attempts: number;
  webhook_deliveries: number;
  events: number;
  idempotency_keys: number;
}

/** A delivery that is over (delivered, or a dead letter) and older than the cutoff, twice bound. */
const FINISHED_AND_OLD = (d: string) =>
  `where ${d}.created_at < ? and ${d}.status in ('delivered', 'dead_letter')
     and coalesce(${d}.last_attempt_at, ${d}.created_at) < ?`;

/** An event older than the cutoff that no delivery refers to. */
const UNNEEDED_AND_OLD = (e: string) =>
  `where ${e}.occurred_at < ? and not exists (select from webhook_deliveries d where d.event_id = ${e}.id)`;

/** Deletes at most `batch` rows of each history table older than `cutoff`. */
export async function pruneBatch(db: Knex, cutoff: Date, batch: number): Promise<PrunedBatch> {
  const count = async (sql: string, bindings: (Date | number)[]) =>
    (await db.raw<{ rowCount: number }>(sql, bindings)).rowCount;
  return {
    webhook_attempts: await count(
      `delete from webhook_attempts where id in (
         select id from webhook_attempts where started_at < ? limit ?)`,
      [cutoff, batch],
    ),
    webhook_deliveries: await count(
      `delete from webhook_deliveries d
        where d.id in (select id from webhook_deliveries o ${FINISHED_AND_OLD('o')} limit ?)
          ${FINISHED_AND_OLD('d').replace('where', 'and')}`,
      [cutoff, cutoff, batch, cutoff, cutoff],
    ),
    events: await count(
      `delete from events e
        where e.id in (select o.id from events o ${UNNEEDED_AND_OLD('o')} limit ?)
          ${UNNEEDED_AND_OLD('e').replace('where', 'and')}`,
      [cutoff, batch, cutoff],
    ),
    idempotency_keys: await count(
      `delete from idempotency_keys where (partner_id, key) in (
         select partner_id, key from idempotency_keys where created_at < ? limit ?)`,
      [cutoff, batch],
    ),
  };
}
