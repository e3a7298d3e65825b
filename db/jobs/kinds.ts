/**
 * Every kind of job, declared once: its stable name, the payload it carries, how pg-boss keeps and
 * retries it, and how long one may run. `npm run migrate` creates the queues from these, every
 * `enqueue()` sends with them, and a worker handler (workers/) names the kind it handles; nothing
 * else says what a job is. Both edges enqueue, so the declarations live here, in db/.
 *
 * Payloads are ids, never snapshots (handlers re-read the row), parsed before a handler runs:
 * an old job can have an old shape. Handlers are idempotent, because pg-boss delivers at least
 * once; a failed job is retried with its kind's policy.
 */
import { z } from 'zod';
import type { Config } from '../platform/config.ts';

/** How pg-boss retries a job whose handler failed. */
export interface RetryPolicy {
  limit: number;
  /** Seconds before the first retry; doubled each time when `backoff`. */
  delaySeconds: number;
  backoff: boolean;
}

/** One kind of job. */
export interface JobKind<P = unknown> {
  /** Stable: stored with every queued job, never derived from a file or class name. */
  readonly name: string;
  readonly payload: z.ZodType<P>;
  readonly retry: RetryPolicy;
  /**
   * Seconds a job may stay active before pg-boss presumes its worker lost and retries it; a
   * function when it depends on the configuration.
   */
  readonly expireInSeconds: number | ((config: Config) => number);
  /**
   * Whether a new job wakes a waiting worker through LISTEN/NOTIFY within milliseconds. Jobs that
   * are scheduled for later (`startAfter`) are found by polling either way.
   */
  readonly notify: boolean;
  /**
   * Whether SQL sends it (a database function queues it in the transaction it runs): `npm run
   * migrate` then generates its `send_job_<kind>()` function (db/jobs/sql-send.ts).
   */
  readonly sentFromSql?: boolean;
}

/** The payload type of a kind. */
export type PayloadOf<K> = K extends JobKind<infer P> ? P : never;

/**
 * How long a short job (an expiry, a fan-out, a promotion: a few milliseconds of SQL) may stay
 * active. It is also how long a job cut short by a database outage (its handler failed, and so did
 * marking it failed) waits before it runs again, so it is short: measured, a PostgreSQL restart
 * left fan-outs active for their whole expiry, then the supervisor (every 5 s) retried them.
 */
const SHORT_JOB_EXPIRE_SECONDS = 15;

/** Retried for a long outage (2 s doubling, 20 times), so no event or expiry is ever given up. */
const PATIENT: RetryPolicy = { limit: 20, delaySeconds: 2, backoff: true };
/** As PATIENT, starting later: the job was early (its hold or entry not due yet). */
const PATIENT_SCHEDULED: RetryPolicy = { limit: 20, delaySeconds: 5, backoff: true };

/** hold.expire: at its hold's expiry, frees the window and records hold_expired (workers/hold-expire.ts). */
export const HOLD_EXPIRE = {
  name: 'hold.expire',
  payload: z.object({ hold_id: z.guid() }),
  retry: PATIENT_SCHEDULED,
  expireInSeconds: SHORT_JOB_EXPIRE_SECONDS,
  notify: false,
  // place_hold() sends it.
  sentFromSql: true,
} satisfies JobKind;

/**
 * hold_group.expire: at a hold group's expiry, every hold of the group still ACTIVE expires, each as
 * a single hold does (workers/hold-group-expire.ts): one job for the group, however many holds.
 */
export const HOLD_GROUP_EXPIRE = {
  name: 'hold_group.expire',
  payload: z.object({ hold_group_id: z.guid() }),
  retry: PATIENT_SCHEDULED,
  expireInSeconds: SHORT_JOB_EXPIRE_SECONDS,
  notify: false,
  // place_hold_group() sends it.
  sentFromSql: true,
} satisfies JobKind;

/**
 * waitlist.expire: at an entry's expires_at, a still-waiting entry becomes expired
 * (workers/waitlist-expire.ts). It names the expiry it was scheduled for: a re-join moves
 * expires_at, and the old job then knows it is stale rather than early.
 */
export const WAITLIST_EXPIRE = {
  name: 'waitlist.expire',
  payload: z.object({ entry_id: z.guid(), expires_at: z.iso.datetime() }),
  retry: PATIENT_SCHEDULED,
  expireInSeconds: SHORT_JOB_EXPIRE_SECONDS,
  notify: false,
} satisfies JobKind;

/**
 * waitlist.promote: each freed window promotes the oldest waiting entry (workers/waitlist-promote.ts).
 * The event that freed a window names it, and makes its promotion happen at most once. One job per
 * transaction, however many windows it freed: `event_id` for one (as every release has sent it),
 * `event_ids` for several (a hold group's release or expiry).
 */
export const WAITLIST_PROMOTE = {
  name: 'waitlist.promote',
  payload: z
    .object({ event_id: z.guid().optional(), event_ids: z.array(z.guid()).max(100).optional() })
    .refine((p) => p.event_id !== undefined || p.event_ids !== undefined, 'names no event'),
  retry: PATIENT,
  expireInSeconds: SHORT_JOB_EXPIRE_SECONDS,
  notify: true,
} satisfies JobKind;

/** Every kind of job the service has. */
/**
 * retention.prune: once a day (a pg-boss schedule, RETENTION_CRON), deletes events, delivery
 * attempts and idempotency keys older than RETENTION_DAYS, in small batches (workers/retention-prune.ts).
 * Running it twice, or late, deletes nothing twice; an hour is room for a large backlog.
 */
export const RETENTION_PRUNE = {
  name: 'retention.prune',
  payload: z.object({}).loose(),
  retry: PATIENT,
  expireInSeconds: 3600,
  notify: false,
} satisfies JobKind;

/** When retention.prune runs: daily at 03:17 UTC, off the hour when cron jobs crowd. */
export const RETENTION_CRON = '17 3 * * *';

/**
 * availability.prune: every ten minutes (AVAILABILITY_PRUNE_CRON), deletes availability changes
 * older than AVAILABILITY_CHANGES_RETENTION_SECONDS, in small batches (workers/availability-prune.ts),
 * remembering per venue the last position deleted, so that a cursor behind it answers 410.
 */
export const AVAILABILITY_PRUNE = {
  name: 'availability.prune',
  payload: z.object({}).loose(),
  retry: PATIENT,
  expireInSeconds: 600,
  notify: false,
} satisfies JobKind;

/** When availability.prune runs: every ten minutes (the contract asks at least hourly). */
export const AVAILABILITY_PRUNE_CRON = '*/10 * * * *';

export const JOB_KINDS: readonly JobKind[] = [
  HOLD_EXPIRE,
  HOLD_GROUP_EXPIRE,
  WAITLIST_EXPIRE,
  WAITLIST_PROMOTE,
  RETENTION_PRUNE,
  AVAILABILITY_PRUNE,
];

/** A kind's job expiry under `config`. */
export function expiryOf(kind: JobKind, config: Config): number {
  return typeof kind.expireInSeconds === 'number' ? kind.expireInSeconds : kind.expireInSeconds(config);
}
