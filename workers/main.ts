/**
 * `npm run worker`: the workers only (Procfile `worker`). Registers every job in
 * `workers/registry.ts` with pg-boss, and runs the webhook dispatcher, which claims delivery
 * attempts from their own schedule (workers/webhook-dispatcher.ts). On SIGTERM it stops claiming and
 * fetching, lets active attempts and jobs finish (pg-boss's graceful stop), then closes its pool,
 * so no job is lost or left half-done; anything cut off is retried.
 */
import type { LookupFunction } from 'node:net';
import type { Job, JobResult, PgBoss } from 'pg-boss';
import { startBoss } from '../db/jobs/boss.ts';
import { loadConfigOrExit, requireDatabaseUrl, type Config } from '../db/platform/config.ts';
import { createDb } from '../db/postgres/knex.ts';
import { createLogger, type Logger } from '../db/platform/log.ts';
import { runAsProcess, stopInTurn, waitAtMost } from '../db/platform/shutdown.ts';
import { retryWhileUnavailable, waitForDatabase } from '../db/postgres/wait-for-database.ts';
import { waitForMigrations } from '../db/schema/wait-for-migrations.ts';
import { RetryLaterError, type JobDeps, type JobHandler } from './job-handler.ts';
import { handlers } from './registry.ts';
import { startDispatcher, type Dispatcher } from './webhook-dispatcher.ts';
import { oldestTransactionAge, sampleQueues } from '../db/jobs/queue-stats.ts';
import { Metrics, unserved } from '../db/platform/metrics.ts';
import { serveMetricsIfAsked, type ReadinessCheck } from '../db/platform/metrics-server.ts';
import { inJobSpan } from '../db/platform/tracing.ts';
import { watchPools } from '../db/postgres/pool-gauges.ts';
import { readiness } from '../db/schema/readiness.ts';

/** How long active jobs get to finish after SIGTERM. */
const STOP_TIMEOUT_MS = 30_000;
/**
 * And then the database connections to close: a worker exits within 33 s of SIGTERM whatever the
 * database does (the operator guide asks for a grace period of at least 35 s before SIGKILL).
 */
const DATABASE_CLOSE_MS = 3_000;

/** Running workers and how to stop them gracefully. */
export interface Workers {
  stop(): Promise<void>;
}

/** Options of {@link startWorkers}; tests use them, the worker entry point does not. */
export interface WorkerOptions {
  /** The handlers to run (default: every handler in the registry). */
  handlers?: readonly JobHandler[];
  /** The resolver webhook attempts dial through (default: db/platform/host-resolver.ts, off the thread pool). */
  lookup?: LookupFunction;
  /** Whether to run the webhook dispatcher (default true); tests of one delivery run its attempts by hand. */
  dispatch?: boolean;
  /** Abandons the wait for the database at start-up. */
  signal?: AbortSignal;
  /** The registry the workers record into (default: one nobody serves). */
  metrics?: Metrics;
  /** Told how to check this process's readiness once it has a database. */
  probes?: { setReadiness(check: ReadinessCheck): void } | undefined;
}

/** Starts pg-boss and one worker per registered job, once the database answers and is migrated. */
export async function startWorkers(
  config: Config,
  databaseUrl: string,
  log: Logger,
  {
    handlers: run = handlers,
    lookup,
    signal,
    metrics = unserved,
    probes,
    dispatch = true,
  }: WorkerOptions = {},
): Promise<Workers> {
  if (config.databasePoolMode === 'transaction') {
    // pg-boss LISTENs for new jobs and holds session state: a worker always runs in session mode.
    log.warn('DATABASE_POOL_MODE=transaction does not apply to workers: give them a direct DATABASE_URL');
  }
  await waitForDatabase(databaseUrl, log, signal);
  // The web's statement and lock limits hold here too: a stuck statement fails its job, which
  // pg-boss retries, instead of holding a connection forever.
  const db = createDb(databaseUrl, {
    poolMax: 10,
    applicationName: 'booking-worker',
    log,
    statementTimeoutMs: config.databaseStatementTimeoutMs,
    lockTimeoutMs: config.databaseLockTimeoutMs,
  });
  let running: Awaited<ReturnType<typeof startRunning>>;
  try {
    await waitForMigrations(db, log, {
      signal,
      onWaiting: (reason) => probes?.setReadiness(() => Promise.resolve(reason)),
    });
    running = await retryWhileUnavailable(
      () => startRunning(databaseUrl, run, dispatch, { db, config, log, metrics, ...(lookup && { lookup }) }),
      log,
      'starting the workers',
      signal,
    );
  } catch (err) {
    await db.destroy();
    throw err;
  }
  const { boss, dispatcher } = running;
  const unwatchPools = watchPools(metrics, db, boss);
  metrics.watchQueues(() => sampleQueues(boss, db));
  metrics.watchHorizon(() => oldestTransactionAge(db));
  probes?.setReadiness(() => readiness(db));
  log.info({ jobs: run.map((h) => h.kind.name), webhooks: dispatch }, 'workers started');
  return {
    async stop() {
      await waitAtMost(
        log,
        STOP_TIMEOUT_MS + DATABASE_CLOSE_MS,
        Promise.all([dispatcher?.stop(), boss.stop({ graceful: true, timeout: STOP_TIMEOUT_MS })]).then(() =>
          db.destroy(),
        ),
        'the database did not answer: active jobs are left to run again once they expire, connections to close at exit',
      );
      unwatchPools();
      log.info('workers stopped');
    },
  };
}

/**
 * pg-boss, started, with a worker for each handler, and the webhook dispatcher (when asked). On a
 * failure pg-boss is stopped again before it rejects (the dispatcher is the last step, and a
 * dispatcher that did not start holds nothing), so that a start can be tried afresh.
 */
async function startRunning(
  databaseUrl: string,
  run: readonly JobHandler[],
  dispatch: boolean,
  shared: Omit<JobDeps, 'boss'>,
): Promise<{ boss: PgBoss; dispatcher: Dispatcher | undefined }> {
  const boss = await startBoss(databaseUrl, 'worker', shared.log);
  try {
    const deps: JobDeps = { ...shared, boss };
    for (const handler of run) {
      await boss.work(
        handler.kind.name,
        {
          batchSize: handler.batchSize,
          pollingIntervalSeconds: handler.pollingIntervalSeconds,
          // LISTEN/NOTIFY wakes a worker for a new job; this polling is the backstop for wake-ups
          // that were coalesced or missed, and pg-boss's default of 30 s left backlogs waiting.
          notifyPollingIntervalSeconds: handler.pollingIntervalSeconds,
          // A full batch means more work is waiting: fetch again at once (DESIGN.md: thousands/s).
          burstWhenBatchFull: handler.batchSize > 1,
          // Each job of a batch completes or fails on its own (see runBatch).
          perJobResults: true,
        },
        (batch: Job<unknown>[]) => runBatch(handler, batch, deps),
      );
    }
    const dispatcher = dispatch ? await startDispatcher({ ...shared, databaseUrl }) : undefined;
    return { boss, dispatcher };
  } catch (err) {
    await boss.stop({ graceful: false }).catch(() => undefined);
    throw err;
  }
}

/**
 * Runs a batch, one job at a time, and settles each job by its own result. pg-boss settles a batch
 * as a whole unless told otherwise: one failing job then failed the whole batch and pg-boss retried
 * every job of it, the ones that had done their work included. With `perJobResults` only the failed
 * job is retried.
 */
async function runBatch(handler: JobHandler, batch: Job<unknown>[], deps: JobDeps): Promise<JobResult[]> {
  const run = async (job: Job<unknown>): Promise<JobResult> => {
    const requestId = (job.data as { trace?: { request_id?: unknown } } | null)?.trace?.request_id;
    const log = deps.log.child({
      job: handler.kind.name,
      job_id: job.id,
      ...(typeof requestId === 'string' && { request_id: requestId }),
    });
    try {
      // In the trace of the request (or job) that sent it (db/platform/tracing.ts).
      await inJobSpan(handler.kind.name, job.data, { 'messaging.message.id': job.id }, () =>
        handler.handle(handler.kind.payload.parse(job.data), { ...deps, log }, job),
      );
      return { id: job.id, status: 'completed' };
    } catch (err) {
      if (err instanceof RetryLaterError)
        log.info({ reason: err.message }, 'job not ready; pg-boss will retry it');
      else log.warn({ err }, 'job failed; pg-boss will retry it');
      return {
        id: job.id,
        status: 'failed',
        output: { message: err instanceof Error ? err.message : String(err) },
      };
    }
  };
  const results: JobResult[] = [];
  for (const job of batch) results.push(await run(job));
  return results;
}

if (import.meta.main) {
  const config = loadConfigOrExit('json');
  const log = createLogger(config.logLevel);
  await runAsProcess(log, async (signal) => {
    const metrics = new Metrics(['worker']);
    const probes = await serveMetricsIfAsked(config, metrics, log);
    const workers = await startWorkers(config, requireDatabaseUrl(config, undefined, 'json'), log, {
      signal,
      metrics,
      probes,
    });
    return stopInTurn(workers, probes);
  });
}
