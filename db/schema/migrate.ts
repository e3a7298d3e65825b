/**
 * `npm run migrate`: knex migrations, then the pg-boss schema and queues, the SQL functions that send
 * jobs from the database (db/jobs/sql-send.ts), and every SQL function from its file in
 * `db/functions/` (db/schema/sources.ts), created or replaced in one transaction. Two migrate
 * processes may start at once (a release phase and a laptop, two deploys): an advisory lock makes
 * the second wait for the first and then find nothing left to do, instead of failing on knex's
 * migration lock or racing pg-boss's installer.
 */
import pg from 'pg';
import { createBoss, ensureQueues } from '../jobs/boss.ts';
import { installSendFunctions } from '../jobs/sql-send.ts';
import { loadConfig, loadConfigOrExit, requireDatabaseUrl, type Config } from '../platform/config.ts';
import { createDb } from '../postgres/knex.ts';
import { createLogger, type Logger } from '../platform/log.ts';
import { takeMigrationLock } from './migration-lock.ts';
import { functionFiles, MIGRATIONS } from './sources.ts';

/** Brings the database at `databaseUrl` to the latest schema, knex and pg-boss alike. */
export async function migrate(
  databaseUrl: string,
  log: Logger,
  config: Config = loadConfig(),
): Promise<void> {
  const releaseLock = await takeMigrationLock(databaseUrl, config.databasePoolMode);
  try {
    const db = createDb(databaseUrl, {
      poolMax: 2,
      applicationName: 'booking-migrate',
      log,
      poolMode: config.databasePoolMode,
    });
    try {
      const [, applied] = (await db.migrate.latest(MIGRATIONS)) as [number, string[]];
      if (applied.length) log.info({ applied }, 'migrations applied');
      const boss = createBoss(databaseUrl, 'migrate', log);
      await boss.start();
      try {
        await ensureQueues(boss, config);
      } finally {
        await boss.stop({ graceful: false });
      }
      await installSendFunctions(db);
    } finally {
      await db.destroy();
    }
    await installFunctions(databaseUrl);
  } finally {
    await releaseLock();
  }
}

/**
 * Creates or replaces every SQL function from its file, in the files' order, in one transaction:
 * processes running meanwhile see the functions of before or of after, never a mix. Sent as the
 * files are written, on a connection of its own (knex would read their `?` as bindings).
 */
async function installFunctions(databaseUrl: string): Promise<void> {
  const client = new pg.Client({ connectionString: databaseUrl, application_name: 'booking-migrate' });
  await client.connect();
  try {
    await client.query('begin');
    for (const file of functionFiles()) {
      try {
        await client.query(file.sql);
      } catch (err) {
        throw new Error(`db/functions/${file.name}.sql: ${(err as Error).message}`, { cause: err });
      }
    }
    await client.query('commit');
  } catch (err) {
    await client.query('rollback').catch(() => undefined);
    throw err;
  } finally {
    await client.end();
  }
}

if (import.meta.main) {
  const config = loadConfigOrExit();
  const log = createLogger(config.logLevel);
  // Node's warnings (pg's notice about `sslmode=require` …) as JSON lines, like the rest it prints.
  process.removeAllListeners('warning');
  process.on('warning', (warning) =>
    log.warn({ warning: { name: warning.name, message: warning.message } }, 'node warning'),
  );
  try {
    await migrate(requireDatabaseUrl(config), log, config);
    log.info('database is up to date');
  } catch (err) {
    log.fatal({ err }, 'migration failed');
    process.exitCode = 1;
  }
}
