/**
 * The pg-boss instance on the service's own database, and the queue definitions that `npm run
 * migrate` creates. Jobs are enqueued through `db/jobs/jobs.ts`, inside the transaction that causes them.
 */
import { PgBoss, type ConstructorOptions, type Queue } from 'pg-boss';
import { JOBS } from './jobs.ts';
import type { Logger } from '../platform/log.ts';
import { isDatabaseUnavailable } from '../postgres/pg-errors.ts';

/** A queue the service uses, with the options pg-boss applies to every job in it. */
export type QueueDefinition = Queue;

/**
 * Every queue of the service. Each job module in `workers/` names one of these; a queue is listed
 * here (not in `workers/`) because the web process enqueues into it too.
 */
/**
 * How long a short job (an expiry, a fan-out, a promotion: a few milliseconds of SQL) may stay
 * active before pg-boss presumes its worker lost and retries it. It is also how long a job cut
 * short by a database outage (its handler failed, and so did marking it failed) waits before it
 * runs again, so it is short: measured, a PostgreSQL restart left fan-outs active for their whole
 * expiry, then the supervisor (every 5 s) retried them. Handlers are idempotent, so a retry of a
 * job that was merely slow does no harm.
 */
const SHORT_JOB_EXPIRE_SECONDS = 15;

export const QUEUES: readonly QueueDefinition[] = [
  // Expiry is idempotent, so retries are safe; a job that cannot expire its hold yet is retried.
  {
    name: JOBS.holdExpire,
    retryLimit: 20,
    retryDelay: 5,
    retryBackoff: true,
    expireInSeconds: SHORT_JOB_EXPIRE_SECONDS,
  },
  // Fan-out and delivery are idempotent too. A job retry covers a crash or a database outage; a
  // failed HTTP attempt is not a job failure (its next try is a new job, on our own schedule). A
  // delivery job does fail on purpose when its attempt is in flight elsewhere: the backoff spaces
  // its retries until that attempt finishes or its lease passes (workers/webhook-deliver.ts).
  // notify: a new job wakes a waiting worker through LISTEN/NOTIFY within milliseconds.
  {
    name: JOBS.webhookFanout,
    retryLimit: 20,
    retryDelay: 2,
    retryBackoff: true,
    expireInSeconds: SHORT_JOB_EXPIRE_SECONDS,
    notify: true,
  },
  {
    name: JOBS.webhookDeliver,
    retryLimit: 20,
    retryDelay: 2,
    retryBackoff: true,
    // Each delivery job sets its own expiry, its attempt's lease (db/jobs/jobs.ts deliveryJobOptions).
    expireInSeconds: 60,
    notify: true,
  },
  // Waitlist jobs are idempotent (conditional updates; a promotion is keyed by its event).
  {
    name: JOBS.waitlistExpire,
    retryLimit: 20,
    retryDelay: 5,
    retryBackoff: true,
    expireInSeconds: SHORT_JOB_EXPIRE_SECONDS,
  },
  {
    name: JOBS.waitlistPromote,
    retryLimit: 20,
    retryDelay: 2,
    retryBackoff: true,
    expireInSeconds: SHORT_JOB_EXPIRE_SECONDS,
    notify: true,
  },
];

/** Creates (does not start) a pg-boss instance; `role` decides which background duties it runs. */
export function createBoss(
  databaseUrl: string,
  role: 'migrate' | 'web' | 'worker',
  log: Logger,
  extra: Partial<ConstructorOptions> = {},
): PgBoss {
  const boss = new PgBoss({
    connectionString: databaseUrl,
    application_name: `booking-${role}-boss`,
    // Only `npm run migrate` changes the schema, so web and worker never race a migration.
    migrate: role === 'migrate',
    // Maintenance and cron are a worker's duty; web processes only send.
    supervise: role === 'worker',
    schedule: role === 'worker',
    useListenNotify: role === 'worker',
    // How often a worker looks for jobs whose worker died (past their expiry) to retry them: a
    // pass needs both timers. The default minute would hold a crashed delivery that long.
    superviseIntervalSeconds: 5,
    monitorIntervalSeconds: 5,
    max: role === 'worker' ? 8 : 2,
    ...extra,
  });
  // Losing the database (a restart, a network cut) is an outage pg-boss recovers from by itself:
  // a warning for the operator, not an error of the service.
  boss.on('error', (err) => {
    if (isDatabaseUnavailable(err)) log.warn({ err: err.message }, 'pg-boss lost its database connection');
    else log.error({ err }, 'pg-boss error');
  });
  boss.on('warning', (warning) => log.warn({ warning }, 'pg-boss warning'));
  return boss;
}

/** Creates every queue in QUEUES, and brings existing ones to the options declared here. */
export async function ensureQueues(boss: PgBoss): Promise<void> {
  for (const { name, ...options } of QUEUES) {
    if (await boss.getQueue(name)) await boss.updateQueue(name, options);
    else await boss.createQueue(name, options);
  }
}
