/**
 * Migrations round-trip (latest → rollback all → latest) and are safe when two `migrate` runs
 * start at once on an empty database.
 */
import test from 'ava';
import { randomBytes } from 'node:crypto';
import { dropDatabase, ensureDatabase, withDatabase } from '../../db/postgres/database-url.ts';
import { createDb } from '../../db/postgres/knex.ts';
import { createLogger } from '../../db/platform/log.ts';
import { migrate } from '../../db/schema/migrate.ts';
import { MIGRATIONS } from '../../db/schema/sources.ts';

const log = createLogger('silent');

async function emptyDatabase(): Promise<{ url: string; drop: () => Promise<void> }> {
  const adminUrl = process.env.TEST_ADMIN_URL!;
  const name = `bt_mig_${randomBytes(4).toString('hex')}`;
  await ensureDatabase(adminUrl, name);
  return { url: withDatabase(adminUrl, name), drop: () => dropDatabase(adminUrl, name) };
}

async function publicTables(url: string): Promise<string[]> {
  const db = createDb(url, { poolMax: 1 });
  try {
    const rows = await db('pg_tables')
      .where({ schemaname: 'public' })
      .orderBy('tablename')
      .pluck('tablename');
    return rows as string[];
  } finally {
    await db.destroy();
  }
}

test('two migrate runs started at once both succeed and leave one schema', async (t) => {
  const { url, drop } = await emptyDatabase();
  try {
    await Promise.all([migrate(url, log), migrate(url, log), migrate(url, log)]);
    const tables = await publicTables(url);
    t.true(tables.includes('partners'));
    t.true(tables.includes('rate_limit_hits'));
    const db = createDb(url, { poolMax: 1 });
    try {
      const applied = await db('knex_migrations').count({ n: '*' });
      const files = (await db.migrate.list(MIGRATIONS)) as [unknown[], unknown[]];
      t.is(Number(applied[0]?.n), files[0].length, 'each migration applied once');
      t.deepEqual(files[1], [], 'nothing pending');
      const boss = await db.raw<{ rows: unknown[] }>("select 1 from pg_namespace where nspname = 'pgboss'");
      t.is(boss.rows.length, 1, 'pg-boss schema installed');
    } finally {
      await db.destroy();
    }
  } finally {
    await drop();
  }
});

test('latest → rollback all → latest round-trips', async (t) => {
  const { url, drop } = await emptyDatabase();
  const db = createDb(url, { poolMax: 2 });
  try {
    await db.migrate.latest(MIGRATIONS);
    const first = await publicTables(url);
    await db.migrate.rollback(MIGRATIONS, true);
    t.deepEqual(
      (await publicTables(url)).filter((n) => !n.startsWith('knex_')),
      [],
      'down removes every table',
    );
    await db.migrate.latest(MIGRATIONS);
    t.deepEqual(await publicTables(url), first);
  } finally {
    await db.destroy();
    await drop();
  }
});
