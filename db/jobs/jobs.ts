/**
 * Job names and payloads, declared once for both edges, and `enqueue()`, the one way to send a job:
 * inside the caller's transaction, so the job exists if and only if the change that causes it
 * commits.
 */
import { fromKnex, type PgBoss } from 'pg-boss';
import { z } from 'zod';
import type { Config } from '../platform/config.ts';
import type { Knex } from '../postgres/knex.ts';

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
  // The attempt a job is for, its id named when the attempt was scheduled: a job runs that attempt
  // or nothing, so a duplicate, a stale retry or a job of an earlier redelivery round can never run
  // another one. Jobs queued before attempts had ids carry only delivery_id.
  [JOBS.webhookDeliver]: z.object({ delivery_id: z.guid(), attempt_id: z.guid().optional() }),
  // The expiry the job was scheduled for: a re-join moves expires_at, and the old job then knows
  // it is stale rather than early.
  [JOBS.waitlistExpire]: z.object({ entry_id: z.guid(), expires_at: z.iso.datetime() }),
  // The event that freed a window names it, and makes its promotion happen at most once.
  [JOBS.waitlistPromote]: z.object({ event_id: z.guid() }),
} satisfies Record<(typeof JOBS)[keyof typeof JOBS], z.ZodType>;

export type JobName = keyof typeof PAYLOADS;
export type JobPayload<N extends JobName> = z.infer<(typeof PAYLOADS)[N]>;

/**
 * Thrown by a handler whose job cannot do its work yet but will be able to later (a delivery job
 * whose attempt is still in flight elsewhere): the job fails, pg-boss retries it after its queue's
 * backoff, and the worker logs it as expected rather than as a warning.
 */
export class RetryLaterError extends Error {
  override readonly name = 'RetryLaterError';
}

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
 * How long past its HTTP deadline (WEBHOOK_TIMEOUT_MS) an attempt may still be recording its outcome
 * before another job may declare it abandoned and move the delivery on. Recording is one short
 * transaction; the margin covers a slow commit or a stalled event loop.
 */
export const ATTEMPT_LEASE_MARGIN_SECONDS = 5;

/** Seconds from an attempt's start after which its worker is presumed dead (its lease). */
export function attemptLeaseSeconds(config: Config): number {
  return config.webhookTimeoutMs / 1000 + ATTEMPT_LEASE_MARGIN_SECONDS;
}

/**
 * Options of a `webhook.deliver` job: it expires (and pg-boss retries it) no earlier than its
 * attempt's lease ends, so the retry of a dead worker's job finds the lease passed and takes over;
 * `startAfter` is a moment or seconds from now on the database clock.
 */
export function deliveryJobOptions(
  config: Config,
  startAfter?: number | Date,
): { expireInSeconds: number; startAfter?: number | Date } {
  const expireInSeconds = Math.ceil(attemptLeaseSeconds(config));
  return startAfter === undefined ? { expireInSeconds } : { expireInSeconds, startAfter };
}
