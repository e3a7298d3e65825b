/**
 * `npm run web`: the Koa API alone (Procfile `web`). On SIGTERM or SIGINT it stops accepting,
 * lets in-flight requests finish, then closes its pool.
 */
import { loadConfigOrExit, requireDatabaseUrl, type Config } from '../db/platform/config.ts';
import type { PgBoss } from 'pg-boss';
import { startBoss } from '../db/jobs/boss.ts';
import { createDb } from '../db/postgres/knex.ts';
import { createLogger, type Logger } from '../db/platform/log.ts';
import { Metrics, unserved } from '../db/platform/metrics.ts';
import { serveMetricsIfAsked, type ReadinessCheck } from '../db/platform/metrics-server.ts';
import { runAsProcess, stopInTurn, waitAtMost } from '../db/platform/shutdown.ts';
import { watchPools } from '../db/postgres/pool-gauges.ts';
import { readiness } from '../db/schema/readiness.ts';
import { retryWhileUnavailable, waitForDatabase } from '../db/postgres/wait-for-database.ts';
import { waitForMigrations } from '../db/schema/wait-for-migrations.ts';
import { buildApp } from './app.ts';
import { closeGracefully, listenStarting, type StartingServer } from './server.ts';

/**
 * After SIGTERM: how long in-flight requests get to finish before their sockets are cut, and then
 * how long the database connections get to close. Web exits within 10 s of SIGTERM (CONTRACT.md),
 * whatever the database does: the two together leave a second for the last log lines.
 */
const DRAIN_TIMEOUT_MS = 8_000;
const DATABASE_CLOSE_MS = 1_000;

/** A listening web server and how to stop it gracefully. */
export interface WebServer {
  port: number;
  stop(): Promise<void>;
}

/** Options of {@link startWeb}. */
export interface WebOptions {
  /** Abandons the wait for the database at start-up. */
  signal?: AbortSignal | undefined;
  /** The registry requests are counted in (default: one nobody serves). */
  metrics?: Metrics | undefined;
  /** Told how to check this process's readiness once it has a database. */
  probes?: { setReadiness(check: ReadinessCheck): void } | undefined;
}

/**
 * Starts the API on `config.port` against `databaseUrl`. It listens at once, answering its probes
 * (live, not ready) and 503 to the rest, and serves the API once the database answers and its
 * migrations are applied (`signal` abandons the wait).
 */
export async function startWeb(
  config: Config,
  databaseUrl: string,
  log: Logger,
  { signal, metrics = unserved, probes }: WebOptions = {},
): Promise<WebServer> {
  const listening = await listenStarting(config.port, '0.0.0.0', { sandbox: config.sandbox });
  try {
    return await serveWhenReady(listening, config, databaseUrl, log, { signal, metrics, probes });
  } catch (err) {
    listening.server.close();
    listening.server.closeAllConnections();
    throw err;
  }
}

async function serveWhenReady(
  { server, serve, notReady }: StartingServer,
  config: Config,
  databaseUrl: string,
  log: Logger,
  { signal, metrics = unserved, probes }: WebOptions,
): Promise<WebServer> {
  await waitForDatabase(databaseUrl, log, signal);
  const db = createDb(databaseUrl, {
    poolMax: config.webDatabasePoolSize,
    applicationName: 'booking-web',
    log,
    statementTimeoutMs: config.databaseStatementTimeoutMs,
    lockTimeoutMs: config.databaseLockTimeoutMs,
    poolMode: config.databasePoolMode,
  });
  let boss: PgBoss;
  try {
    await waitForMigrations(db, log, {
      signal,
      onWaiting: (reason) => {
        notReady(reason);
        probes?.setReadiness(() => Promise.resolve(reason));
      },
    });
    boss = await retryWhileUnavailable(
      () => startBoss(databaseUrl, 'web', log),
      log,
      'starting pg-boss',
      signal,
    );
  } catch (err) {
    await db.destroy();
    throw err;
  }
  const unwatchPools = watchPools(metrics, db, boss);
  probes?.setReadiness(() => readiness(db));
  const app = buildApp({ db, boss, config, log, metrics });
  serve(app);
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  log.info({ port }, 'web listening');
  return {
    port,
    async stop() {
      await closeGracefully(server, app, DRAIN_TIMEOUT_MS);
      await waitAtMost(
        log,
        DATABASE_CLOSE_MS,
        boss.stop({ graceful: false }).then(() => db.destroy()),
        'the database did not answer: its connections are left to close at exit',
      );
      unwatchPools();
      log.info('web stopped');
    },
  };
}

if (import.meta.main) {
  const config = loadConfigOrExit('json');
  const log = createLogger(config.logLevel);
  await runAsProcess(log, async (signal) => {
    const metrics = new Metrics(['web']);
    const probes = await serveMetricsIfAsked(config, metrics, log);
    const web = await startWeb(config, requireDatabaseUrl(config, undefined, 'json'), log, {
      signal,
      metrics,
      probes,
    });
    return stopInTurn(web, probes);
  });
}
