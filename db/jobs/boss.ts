/**
 * The pg-boss instance on the service's own database, and the queues `npm run migrate` creates from
 * the job kinds (db/jobs/kinds.ts). Jobs are sent with `db/jobs/enqueue.ts`, inside the transaction
 * that causes them.
 */
import { PgBoss, type ConstructorOptions } from 'pg-boss';
import type { Config } from '../platform/config.ts';
import type { Logger } from '../platform/log.ts';
import { isDatabaseUnavailable } from '../postgres/pg-errors.ts';
import {
  AVAILABILITY_PRUNE,
  AVAILABILITY_PRUNE_CRON,
  expiryOf,
  JOB_KINDS,
  RETENTION_CRON,
  RETENTION_PRUNE,
} from './kinds.ts';

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

/**
 * A pg-boss instance for `role`, started; one whose start fails is stopped again before the failure
 * is passed on, so that nothing of it lingers and a start can be tried afresh with a new one.
 */
export async function startBoss(databaseUrl: string, role: 'web' | 'worker', log: Logger): Promise<PgBoss> {
  const boss = createBoss(databaseUrl, role, log);
  try {
    await boss.start();
  } catch (err) {
    await boss.stop({ graceful: false }).catch(() => undefined);
    throw err;
  }
  return boss;
}

/**
 * Creates a queue for every job kind (db/jobs/kinds.ts), and brings existing ones to the kinds'
 * declared retry policy and expiry (under `config`).
 */
export async function ensureQueues(boss: PgBoss, config: Config): Promise<void> {
  for (const kind of JOB_KINDS) {
    const options = {
      retryLimit: kind.retry.limit,
      retryDelay: kind.retry.delaySeconds,
      retryBackoff: kind.retry.backoff,
      expireInSeconds: expiryOf(kind, config),
      notify: kind.notify,
    };
    if (await boss.getQueue(kind.name)) await boss.updateQueue(kind.name, options);
    else await boss.createQueue(kind.name, options);
  }
  // The recurring jobs; upserts, so every migrate leaves exactly these schedules.
  await boss.schedule(RETENTION_PRUNE.name, RETENTION_CRON, {}, { tz: 'UTC' });
  await boss.schedule(AVAILABILITY_PRUNE.name, AVAILABILITY_PRUNE_CRON, {}, { tz: 'UTC' });
}
