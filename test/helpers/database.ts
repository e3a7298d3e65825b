/**
 * One database per test file, cloned from the migrated template that `test/run.ts` built. Call
 * `useTestDatabase(test)` at the top of a file; the database is dropped when the file is done
 * (kept, and its name printed, when KEEP_TEST_DB=1 and a test failed).
 */
import type { TestFn } from 'ava';
import { randomBytes } from 'node:crypto';
import type { PgBoss } from 'pg-boss';
import { createBoss } from '../../db/jobs/boss.ts';
import { loadConfig, type Config } from '../../db/platform/config.ts';
import { dropDatabase, ensureDatabase, withDatabase } from '../../db/postgres/database-url.ts';
import { createDb, type Knex } from '../../db/postgres/knex.ts';
import { createLogger, type Logger } from '../../db/platform/log.ts';

/** What every test file gets: its database, a pool and a started pg-boss on it, a quiet logger. */
export interface TestDatabase {
  name: string;
  url: string;
  adminUrl: string;
  db: Knex;
  boss: PgBoss;
  log: Logger;
  config: Config;
}

function env(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is unset: run the tests with npm test`);
  return value;
}

/** A config for tests: local service, quiet logs (TEST_LOG_LEVEL to see them). */
export function testConfig(overrides: Record<string, string> = {}): Config {
  return loadConfig({
    SERVICE_ENV: 'local',
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    ...overrides,
  });
}

/** Creates a fresh database from the template. */
export async function createTestDatabase(): Promise<TestDatabase> {
  const adminUrl = env('TEST_ADMIN_URL');
  const name = `bt_${randomBytes(6).toString('hex')}`;
  await ensureDatabase(adminUrl, name, env('TEST_TEMPLATE_DB'));
  const url = withDatabase(adminUrl, name);
  const config = testConfig({ DATABASE_URL: url });
  const log = createLogger(config.logLevel);
  const boss = createBoss(url, 'web', log);
  await boss.start();
  return {
    name,
    url,
    adminUrl,
    db: createDb(url, { poolMax: 10, log }),
    boss,
    log,
    config,
  };
}

/** The file's database: call it inside tests; await `.ready()` inside other `before` hooks. */
export interface DatabaseHandle {
  (): TestDatabase;
  ready(): Promise<TestDatabase>;
}

/** Gives the test file its own database, created before its tests and dropped after them. */
export function useTestDatabase<C>(test: TestFn<C>): DatabaseHandle {
  let database: TestDatabase | undefined;
  let creating: Promise<TestDatabase> | undefined;
  let failed = false;
  const ready = () => (creating ??= createTestDatabase().then((d) => (database = d)));
  test.before(ready);
  // Invariants of event publishing (db/rules/events.ts, publish_event()), checked on every file's
  // database: every event has a delivery for each subscription that was owed one (active, listing
  // its type, of a partner granted the venue, both in place before the event), and every delivery
  // is on its way (its next attempt named, or one in flight). "Before" is 200 ms before:
  // `created_at` is when the grant's or the subscription's transaction began, and one that began
  // before the event's but committed after it (tests of a file run side by side) was rightly not
  // seen. The events of a venue archived now are left out: one recorded while it was archived was
  // owed nothing, and no history says which.
  test.after('every event has the deliveries its subscribers were owed, each on its way', async (t) => {
    const { db } = handle();
    const { rows: missing } = await db.raw<{ rows: { event_id: string; subscription_id: string }[] }>(
      `select e.id as event_id, s.id as subscription_id
         from events e
         join venues v on v.id = e.venue_id and v.status <> 'archived'
         join venue_grants g on g.venue_id = e.venue_id and g.created_at < e.occurred_at - interval '200 milliseconds'
         join webhook_subscriptions s on s.partner_id = g.partner_id
                                     and s.created_at < e.occurred_at - interval '200 milliseconds'
        where s.is_active and e.event_type = any (s.event_types)
          and not exists (select 1 from webhook_deliveries d where d.event_id = e.id and d.subscription_id = s.id)`,
    );
    t.deepEqual(missing, [], 'deliveries missing');
    // Every delivery not over names its next attempt, or has one in flight: none is forgotten.
    const { rows: stranded } = await db.raw<{ rows: { id: string }[] }>(
      `select d.id from webhook_deliveries d
        where d.status in ('pending', 'failed') and d.next_attempt_id is null
          and not (d.status = 'pending' and d.attempts > 0)`,
    );
    t.deepEqual(stranded, [], 'deliveries with no attempt named or in flight');
  });
  test.afterEach.always((t) => {
    if (!t.passed) failed = true;
  });
  test.after.always(async () => {
    if (!database) return;
    await database.boss.stop({ graceful: false });
    await database.db.destroy();
    if (failed && process.env.KEEP_TEST_DB === '1') console.log(`kept test database ${database.name}`);
    else await dropDatabase(database.adminUrl, database.name);
  });
  const handle = () => {
    if (!database) throw new Error('the test database is not ready (await database.ready() in hooks)');
    return database;
  };
  return Object.assign(handle, { ready });
}
