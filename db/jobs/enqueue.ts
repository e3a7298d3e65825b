/**
 * `enqueue()`, the one way to send a job: inside the caller's transaction, so the job exists if and
 * only if the change that causes it commits (pg-boss sends through the transaction's connection).
 */
import { fromKnex, type PgBoss } from 'pg-boss';
import type { Config } from '../platform/config.ts';
import { jobTrace } from '../platform/tracing.ts';
import type { Knex } from '../postgres/knex.ts';
import { expiryOf, type JobKind, type PayloadOf } from './kinds.ts';

/** When a job may start, and the configuration a kind's expiry depends on (webhook.deliver's). */
export interface EnqueueOptions {
  /** A moment, or seconds from now on the database clock. */
  startAfter?: Date | number;
  config?: Config;
}

/** Sends a job of `kind` through `trx`'s connection, with the kind's expiry. */
export async function enqueue<K extends JobKind>(
  boss: PgBoss,
  trx: Knex.Transaction,
  kind: K,
  payload: PayloadOf<K>,
  { startAfter, config }: EnqueueOptions = {},
): Promise<void> {
  // A kind whose expiry depends on the configuration cannot be sent without it; every other kind
  // has its expiry as the queue's default as well (npm run migrate), and says it here all the same.
  if (typeof kind.expireInSeconds !== 'number' && !config) {
    throw new Error(`${kind.name} jobs need the configuration to be enqueued`);
  }
  const expireInSeconds = config ? expiryOf(kind, config) : (kind.expireInSeconds as number);
  // The trace of the request or job sending it, which the worker continues (db/platform/tracing.ts).
  const trace = jobTrace();
  await boss.send(kind.name, trace ? { ...(payload as object), trace } : (payload as object), {
    expireInSeconds,
    ...(startAfter === undefined ? {} : { startAfter }),
    db: fromKnex(trx),
  });
}
