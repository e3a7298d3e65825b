/**
 * `npm start`: everything in one process for a laptop — an embedded PostgreSQL when DATABASE_URL
 * is unset, migrations, demo data on a database with no partners (the key is printed once), the
 * web API and all workers. This is the one module that imports both edges, `api/` and `workers/`.
 */
import { startWeb } from './api/main.ts';
import { ensureDatabase, withDatabase } from './db/postgres/database-url.ts';
import { loadConfigOrExit } from './db/platform/config.ts';
import { seedDemo } from './db/cli/demo-seed.ts';
import { announceStartDatabase } from './db/platform/embedded/announce.ts';
import { startEmbeddedPostgres, type EmbeddedServer } from './db/platform/embedded/server.ts';
import { createDb } from './db/postgres/knex.ts';
import { createLogger, type Logger } from './db/platform/log.ts';
import { migrate } from './db/schema/migrate.ts';
import { Metrics } from './db/platform/metrics.ts';
import { serveMetricsIfAsked } from './db/platform/metrics-server.ts';
import * as partners from './db/queries/partners.ts';
import { onShutdownSignal, printOnlyJson } from './db/platform/shutdown.ts';
import { startWorkers } from './workers/main.ts';

const config = loadConfigOrExit();
const log = createLogger(config.logLevel);
printOnlyJson(log);

// Whatever has started, stopped in reverse order on SIGTERM, even one that arrives mid-start-up, so
// the embedded PostgreSQL (started first) stops last.
const running: { stop(): Promise<void> }[] = [];
let startup: Promise<void> = Promise.resolve();
onShutdownSignal(log, async () => {
  await startup.catch(() => undefined);
  for (const part of running.reverse()) await part.stop();
});
startup = startAll();
await startup;

async function startAll(): Promise<void> {
  // One registry and one metrics listener for web and workers alike (METRICS_PORT).
  const metrics = new Metrics();
  const probes = await serveMetricsIfAsked(config, metrics, log);
  if (probes) running.push(probes);
  let databaseUrl = config.databaseUrl;
  if (!databaseUrl) {
    const embedded: EmbeddedServer = await startEmbeddedPostgres('pg', { log });
    running.push(embedded);
    await ensureDatabase(embedded.adminUrl, 'booking');
    databaseUrl = withDatabase(embedded.adminUrl, 'booking');
    log.info({ data: '.data/pg', port: embedded.port }, 'embedded PostgreSQL started');
  }
  await migrate(databaseUrl, log, config);
  if (!config.databaseUrl) {
    // Tell the operator where it is, and `npm run ops` of this checkout (announce.ts).
    running.push(await announceStartDatabase(databaseUrl));
    process.stdout.write(
      `\nThe embedded PostgreSQL of this checkout, while npm start runs (npm run ops finds it too):\n` +
        `  DATABASE_URL=${databaseUrl}\n\n`,
    );
  }
  await seedIfEmpty(databaseUrl, log);
  running.push(await startWorkers(config, databaseUrl, log, { metrics, probes }));
  running.push(await startWeb(config, databaseUrl, log, { metrics, probes }));
}

async function seedIfEmpty(url: string, logger: Logger): Promise<void> {
  const db = createDb(url, { poolMax: 1, applicationName: 'booking-start' });
  try {
    const seed = await db.transaction(async (trx) => {
      // Two `npm start`s on one empty database must not both seed.
      await trx.raw('lock table partners in share row exclusive mode');
      return (await partners.noneExist(trx)) ? seedDemo(trx) : undefined;
    });
    if (!seed) return;
    logger.info({ partner_id: seed.partner_id, venue_id: seed.venue_id }, 'demo data seeded');
    process.stdout.write(
      [
        '',
        'Demo data seeded. The demo API key is shown this once:',
        `  x-api-key: ${seed.api_key}`,
        `  partner ${seed.partner_id}, venue ${seed.venue_id}, package ${seed.package_id}`,
        `  try: curl -H 'x-api-key: ${seed.api_key}' http://localhost:${config.port}/api/v1/partner/venues`,
        '',
      ].join('\n') + '\n',
    );
  } finally {
    await db.destroy();
  }
}
