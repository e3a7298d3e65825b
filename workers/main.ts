/**
 * `npm run worker`: pg-boss workers only (Procfile `worker`). Registers every job in
 * `workers/registry.ts`. On SIGTERM it stops fetching, lets active jobs finish (pg-boss's graceful
 * stop), then closes its pool, so no job is lost or left half-done; anything cut off is retried.
 */
import type { Job } from 'pg-boss';
import { createBoss } from '../db/boss.ts';
import { loadConfigOrExit, requireDatabaseUrl, type Config } from '../db/config.ts';
import { createDb } from '../db/knex.ts';
import { createLogger, type Logger } from '../db/log.ts';
import { onShutdownSignal } from '../db/shutdown.ts';
import { jobs, type JobDeps, type JobModule } from './registry.ts';

/** How long active jobs get to finish after SIGTERM. */
const STOP_TIMEOUT_MS = 30_000;

/** Running workers and how to stop them gracefully. */
export interface Workers {
  stop(): Promise<void>;
}

/** Starts pg-boss and one worker per registered job. */
export async function startWorkers(
  config: Config,
  databaseUrl: string,
  log: Logger,
  modules: readonly JobModule[] = jobs,
): Promise<Workers> {
  const db = createDb(databaseUrl, { poolMax: 10, applicationName: 'booking-worker', log });
  const boss = createBoss(databaseUrl, 'worker', log);
  await boss.start();
  for (const module of modules) {
    await boss.work(
      module.name,
      {
        batchSize: module.batchSize,
        pollingIntervalSeconds: module.pollingIntervalSeconds,
        // LISTEN/NOTIFY wakes a worker for a new job; this polling is the backstop for wake-ups
        // that were coalesced or missed, and pg-boss's default of 30 s left backlogs waiting.
        notifyPollingIntervalSeconds: module.pollingIntervalSeconds,
        // A full batch means more work is waiting: fetch again at once (DESIGN.md: thousands/s).
        burstWhenBatchFull: module.batchSize > 1,
        localConcurrency: module.localConcurrency ?? 1,
      },
      (batch: Job<unknown>[]) => runBatch(module, batch, { db, boss, config, log }),
    );
  }
  log.info({ jobs: modules.map((m) => m.name) }, 'workers started');
  return {
    async stop() {
      await boss.stop({ graceful: true, timeout: STOP_TIMEOUT_MS });
      await db.destroy();
      log.info('workers stopped');
    },
  };
}

/**
 * Runs a batch, one job at a time or side by side (`concurrentBatch`). pg-boss settles a batch as
 * a whole, so when any job failed the batch is failed after every job had its turn, and pg-boss
 * retries them all; that is safe because handlers are idempotent (a retried job whose work is done
 * returns at once).
 */
async function runBatch(module: JobModule, batch: Job<unknown>[], deps: JobDeps): Promise<void> {
  const failures: unknown[] = [];
  const run = async (job: Job<unknown>) => {
    const log = deps.log.child({ job: module.name, job_id: job.id });
    try {
      await module.handle(module.payload.parse(job.data), { ...deps, log }, job);
    } catch (err) {
      log.warn({ err }, 'job failed; pg-boss will retry it');
      failures.push(err);
    }
  };
  if (module.concurrentBatch) await Promise.all(batch.map(run));
  else for (const job of batch) await run(job);
  if (failures.length)
    throw new AggregateError(failures, `${failures.length} of ${batch.length} jobs failed`);
}

if (import.meta.main) {
  const config = loadConfigOrExit();
  const log = createLogger(config.logLevel);
  // Listen for signals before starting, so a SIGTERM during start-up still stops gracefully.
  const workers = startWorkers(config, requireDatabaseUrl(config), log);
  onShutdownSignal(log, async () => (await workers).stop());
  await workers;
}
