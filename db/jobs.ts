/**
 * Job names and payloads, declared once for both edges, and `enqueue()`, the one way to send a job:
 * inside the caller's transaction, so the job exists if and only if the change that causes it
 * commits.
 */
import { fromKnex, type PgBoss } from 'pg-boss';
import { z } from 'zod';
import type { Config } from './config.ts';
import type { Knex } from './knex.ts';

/** Stable job names (never derived from file or class names). */
export const JOBS = {
  holdExpire: 'hold.expire',
  webhookFanout: 'webhook.fanout',
  webhookDeliver: 'webhook.deliver',
  waitlistExpire: 'waitlist.expire',
  waitlistPromote: 'waitlist.promote',
} as const;

/** Payloads are ids, never snapshots: handlers re-read the row. */
export const PAYLOADS = {
  [JOBS.holdExpire]: z.object({ hold_id: z.guid() }),
  [JOBS.webhookFanout]: z.object({ event_id: z.guid() }),
  [JOBS.webhookDeliver]: z.object({ delivery_id: z.guid() }),
  // The expiry the job was scheduled for: a re-join moves expires_at, and the old job then knows
  // it is stale rather than early.
  [JOBS.waitlistExpire]: z.object({ entry_id: z.guid(), expires_at: z.iso.datetime() }),
  // The event that freed a window names it, and makes its promotion happen at most once.
  [JOBS.waitlistPromote]: z.object({ event_id: z.guid() }),
} satisfies Record<(typeof JOBS)[keyof typeof JOBS], z.ZodType>;

export type JobName = keyof typeof PAYLOADS;
export type JobPayload<N extends JobName> = z.infer<(typeof PAYLOADS)[N]>;

/** Sends a job through `trx`'s connection; `startAfter` schedules it. */
export async function enqueue<N extends JobName>(
  boss: PgBoss,
  trx: Knex.Transaction,
  name: N,
  payload: JobPayload<N>,
  /** startAfter: a moment, or a number of seconds from now (on the database clock). */
  options: { startAfter?: Date | number; expireInSeconds?: number } = {},
): Promise<void> {
  await boss.send(name, payload, { ...options, db: fromKnex(trx) });
}

/**
 * Options of a `webhook.deliver` job: it expires (and pg-boss retries it) a little after the HTTP
 * timeout, which is how a dead worker's attempt is taken over; `startAfter` is in seconds.
 */
export function deliveryJobOptions(
  config: Config,
  startAfter?: number,
): { expireInSeconds: number; startAfter?: number } {
  const expireInSeconds = Math.ceil(config.webhookTimeoutMs / 1000) + 5;
  return startAfter === undefined ? { expireInSeconds } : { expireInSeconds, startAfter };
}
