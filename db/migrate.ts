/**
 * `npm run migrate`: knex migrations, then the pg-boss schema and queues, and the SQL functions that
 * send jobs from the database (db/jobs/sql-send.ts). Two migrate processes may start at once (a
 * release phase and a laptop, two deploys): a session advisory lock makes the second wait for the
 * first and then find nothing left to do, instead of failing on knex's migration lock or racing
 * pg-boss's installer.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { createBoss, ensureQueues } from './jobs/boss.ts';
import { installSendFunctions } from './jobs/sql-send.ts';
import { loadConfig, loadConfigOrExit, requireDatabaseUrl, type Config } from './platform/config.ts';
import { createDb } from './postgres/knex.ts';
import { createLogger, type Logger } from './platform/log.ts';

/** Arbitrary constant naming the migration advisory lock (the ASCII of "booking!"). */
const MIGRATION_LOCK_KEY = '7165064483209717537';

/** Where knex finds the migrations, for `migrate.latest()` and `migrate.rollback()`. */
export const MIGRATIONS = {
  directory: path.join(path.dirname(fileURLToPath(import.meta.url)), 'migrations'),
  loadExtensions: ['.ts'],
};

/** Brings the database at `databaseUrl` to the latest schema, knex and pg-boss alike. */
export async function migrate(
  databaseUrl: string,
  log: Logger,
  config: Config = loadConfig(),
): Promise<void> {
  const lock = new pg.Client({ connectionString: databaseUrl, application_name: 'booking-migrate' });
  await lock.connect();
  try {
    await lock.query('select pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
    const db = createDb(databaseUrl, { poolMax: 2, applicationName: 'booking-migrate', log });
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
  } finally {
    await lock.end();
  }
}

if (import.meta.main) {
  const config = loadConfigOrExit();
  const log = createLogger(config.logLevel);
  try {
    await migrate(requireDatabaseUrl(config), log, config);
    log.info('database is up to date');
  } catch (err) {
    log.fatal({ err }, 'migration failed');
    process.exitCode = 1;
  }
}
