/**
 * DATABASE_POOL_MODE=transaction behind a real transaction-pooling PgBouncer (Debian's 1.18, which
 * carries no prepared statements and refuses unknown startup parameters: test/helpers/pgbouncer.ts)
 * in front of the suite's PostgreSQL, with the service run as processes: two migrations at once
 * through it, the operator CLI through it, two web processes through it, and two workers on a
 * direct connection (they LISTEN, which needs a session). Holds, confirms, a fight for one slot, an
 * idempotency key replayed across the two webs, a rate limit they share and the webhook deliveries
 * of it all keep every invariant they keep on a direct connection.
 *
 * `.ci/run` installs pgbouncer and sets REQUIRE_PGBOUNCER_TEST=1; elsewhere, without pgbouncer, the
 * test is skipped and says so.
 */
import test from 'ava';
import { randomBytes, randomUUID } from 'node:crypto';
import { dropDatabase, ensureDatabase, withDatabase } from '../db/postgres/database-url.ts';
import { createDb, type Knex } from '../db/postgres/knex.ts';
import { confirm, gridSlots, hold } from './helpers/booking.ts';
import { call, type TestServer } from './helpers/http.ts';
import { runOps } from './helpers/ops.ts';
import { findPgBouncer, startPgBouncer, type PgBouncer } from './helpers/pgbouncer.ts';
import { startProcess, type Started } from './helpers/processes.ts';
import { waitFor } from './helpers/wait.ts';
import { startReceiver, subscribe, type Receiver } from './helpers/webhooks.ts';

const program = findPgBouncer();
const required = process.env.REQUIRE_PGBOUNCER_TEST === '1';

/** Everything the tests share, made once in `before`. */
interface Setup {
  bouncer: PgBouncer;
  name: string;
  /** The database, directly (workers, the test's own reads). */
  directUrl: string;
  /** The database through PgBouncer (migrate, ops, web). */
  pooledUrl: string;
  db: Knex;
  migrations: Started[];
  webs: (TestServer & { process: Started })[];
  workers: Started[];
  world: { partnerId: string; apiKey: string; venueId: string; court: string };
  receiver: Receiver;
  /** Every process started, stopped after the file whatever happened. */
  started: Started[];
}
let setup: Setup | undefined;
const s = (): Setup => {
  if (!setup) throw new Error('setup failed');
  return setup;
};

/** Web and ops: through PgBouncer, in transaction mode. Workers: direct, in session mode. */
const pooledEnv = () => ({ DATABASE_URL: s().pooledUrl, DATABASE_POOL_MODE: 'transaction' });
const ops = async (...args: string[]) => {
  const result = await runOps(pooledEnv(), ...args);
  if (result.code !== 0) throw new Error(`ops ${args[0]}: ${result.stderr}`);
  return result.json;
};

if (!program && !required) {
  test('web behind a transaction-pooling PgBouncer (skipped: no pgbouncer; apt-get install pgbouncer)', (t) => {
    t.log('skipped: no pgbouncer found');
    t.pass();
  });
} else {
  test.before(async () => {
    if (!program) throw new Error('REQUIRE_PGBOUNCER_TEST=1 but no pgbouncer: apt-get install pgbouncer');
    const adminUrl = process.env.TEST_ADMIN_URL;
    if (!adminUrl) throw new Error('TEST_ADMIN_URL is unset: run the tests with npm test');
    // An empty database of its own, so that the migrations through PgBouncer have work to do.
    const name = `pgb_${randomBytes(4).toString('hex')}`;
    await ensureDatabase(adminUrl, name);
    const directUrl = withDatabase(adminUrl, name);
    // `tight`: the same database with a single server connection, where two clients' named
    // statements would meet.
    const bouncer = await startPgBouncer(program, adminUrl, { tight: `dbname=${name} pool_size=1` });
    setup = { bouncer, name, directUrl, pooledUrl: bouncer.url(name), started: [] as Started[] } as Setup;
    const start = (script: string, env: Record<string, string>) => {
      const started = startProcess(script, env);
      setup!.started.push(started);
      return started;
    };

    setup.migrations = [0, 1].map(() => start('db/schema/migrate.ts', pooledEnv()));
    for (const [i, migration] of setup.migrations.entries()) {
      const code = await migration.exited;
      if (code !== 0) throw new Error(`migrate through PgBouncer failed:\n${setup.migrations[i]!.output()}`);
    }
    setup.db = createDb(directUrl, { poolMax: 4 });

    const partner = await ops('partner:create', '--name', 'Pooled Partner', '--rate-limit', '100000');
    const venue = await ops(
      'venue:create',
      '--name',
      'Pooled Arena',
      '--address',
      '1 Road',
      '--city',
      'Pune',
    );
    const court = await ops(
      ...['resource:create', '--venue', venue.venue_id, '--type', 'court', '--sport', 'badminton'],
      ...['--duration', '60', '--price', '500', '--open', '06:00', '--close', '22:00'],
    );
    await ops('grant', '--partner', partner.partner_id, '--venue', venue.venue_id);
    setup.world = {
      partnerId: partner.partner_id,
      apiKey: partner.api_key,
      venueId: venue.venue_id,
      court: court.resource_id,
    };

    const serviceEnv = { WEBHOOK_RETRY_DELAYS: '1,1,1,1', WEBHOOK_TIMEOUT_MS: '3000' };
    // The environment web has, but a direct URL: workers stay in session mode, and say so.
    setup.workers = [0, 1].map(() =>
      start('workers/main.ts', { ...serviceEnv, ...pooledEnv(), DATABASE_URL: directUrl }),
    );
    const webs = [0, 1].map(() => start('api/main.ts', { ...serviceEnv, ...pooledEnv() }));
    setup.webs = [];
    for (const web of webs) {
      const { port } = await web.logLine('web listening');
      setup.webs.push({
        url: `http://127.0.0.1:${port as number}`,
        db: setup.db,
        close: async () => {},
        process: web,
      });
    }
    for (const worker of setup.workers) await worker.logLine('workers started');

    let secret = '';
    setup.receiver = await startReceiver(() => secret);
    ({ secret } = await subscribe(setup.webs[0]!, setup.world.apiKey, setup.receiver.url));
  });

  test.after.always(async () => {
    if (!setup) return;
    for (const p of setup.started) await p.stop();
    await setup.receiver?.close();
    await setup.db?.destroy();
    await setup.bouncer.stop();
    await dropDatabase(process.env.TEST_ADMIN_URL!, setup.name);
  });

  const web = (i: number) => s().webs[i % 2]!;

  test.serial('workers given DATABASE_POOL_MODE=transaction keep a session and warn once', (t) => {
    for (const worker of s().workers) {
      const warnings = worker.output().match(/DATABASE_POOL_MODE=transaction does not apply to workers/g);
      t.is(warnings?.length, 1, worker.output());
    }
  });

  test.serial('two migrations through PgBouncer at once: both succeed, one after the other', (t) => {
    const applied = s().migrations.filter((m) => m.output().includes('"migrations applied"'));
    t.is(applied.length, 1, 'the second waited for the first and found nothing to do');
    t.true(s().migrations.every((m) => m.output().includes('database is up to date')));
  });

  test.serial(
    'PgBouncer refuses what session mode sends; transaction mode passes, timeouts included',
    async (t) => {
      const through = (database: string, options: Parameters<typeof createDb>[1]) => {
        const db = createDb(s().bouncer.url(database), { poolMax: 1, ...options });
        t.teardown(() => db.destroy());
        return db;
      };
      // Startup parameters: session mode sends its timeouts at startup.
      await t.throwsAsync(() => through(s().name, { statementTimeoutMs: 1000 }).raw('select 1'), {
        message: /unsupported startup parameter/,
      });
      // Named statements: two session-mode clients on one server connection name the same statement.
      const [a, b] = [through('tight', {}), through('tight', {})];
      await a.raw('select ?::int', [1]);
      await t.throwsAsync(() => b.raw('select ?::int', [1]), { code: '42P05' });
      const [c, d] = [
        through('tight', { poolMode: 'transaction' }),
        through('tight', { poolMode: 'transaction' }),
      ];
      await c.raw('select ?::int', [1]);
      await d.raw('select ?::int', [1]);
      // The web's settings hold by SET LOCAL.
      const limited = through(s().name, {
        poolMode: 'transaction',
        statementTimeoutMs: 300,
        lockTimeoutMs: 300,
      });
      await t.throwsAsync(() => limited.raw('select pg_sleep(?)', [2]), { code: '57014' });
      await t.throwsAsync(() => limited.transaction((trx) => trx.raw('select pg_sleep(?)', [2])), {
        code: '57014',
      });
    },
  );

  test.serial('holds through one web, confirms through the other', async (t) => {
    const { world, db } = s();
    const slots = (await gridSlots(db, world.venueId, world.court)).slice(0, 6);
    const bookings = await Promise.all(
      slots.map(async (slot, i) => {
        const held = await hold(web(i), world.apiKey, {
          venue_id: world.venueId,
          resource_id: world.court,
          slot_start: slot.slot_start,
        });
        t.is(held.status, 201, held.text);
        const confirmed = await confirm(web(i + 1), world.apiKey, { hold_id: held.body.hold_id as string });
        t.is(confirmed.status, 201, confirmed.text);
        return confirmed.body.booking_id as string;
      }),
    );
    t.is(new Set(bookings).size, 6);
    t.is(Number((await db('bookings').whereIn('id', bookings).count({ n: '*' }))[0]!.n), 6);
  });

  test.serial(
    'a fight for one slot across both webs: one 201, the rest 409 SLOT_NOT_AVAILABLE',
    async (t) => {
      const { world, db } = s();
      const slot = (await gridSlots(db, world.venueId, world.court))[10]!;
      const results = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          hold(web(i), world.apiKey, {
            venue_id: world.venueId,
            resource_id: world.court,
            slot_start: slot.slot_start,
          }),
        ),
      );
      const statuses = results.map((r) => r.status);
      t.is(statuses.filter((status) => status === 201).length, 1, statuses.join(','));
      t.true(
        results
          .filter((r) => r.status !== 201)
          .every((r) => r.status === 409 && r.body.error === 'SLOT_NOT_AVAILABLE'),
        statuses.join(','),
      );
      const live = await db('reservations')
        .where({ active: true, unit_id: world.court })
        .whereRaw('during && tstzrange(?, ?)', [slot.slot_start, slot.slot_end])
        .count({ n: '*' });
      t.is(Number(live[0]!.n), 1);
    },
  );

  test.serial(
    'one idempotency key replayed across both webs: one hold, every answer naming it',
    async (t) => {
      const { world, db } = s();
      const slot = (await gridSlots(db, world.venueId, world.court))[12]!;
      const body = { venue_id: world.venueId, resource_id: world.court, slot_start: slot.slot_start };
      const key = randomUUID();
      const results = await Promise.all(
        Array.from({ length: 10 }, (_, i) => hold(web(i), world.apiKey, { ...body, idempotency_key: key })),
      );
      t.deepEqual([...new Set(results.map((r) => r.status))], [201]);
      const holdIds = new Set(results.map((r) => r.body.hold_id));
      t.is(holdIds.size, 1);
      t.is(
        Number(
          (
            await db('holds')
              .whereIn('id', [...holdIds] as string[])
              .count({ n: '*' })
          )[0]!.n,
        ),
        1,
      );
      const again = await hold(web(1), world.apiKey, { ...body, idempotency_key: key });
      t.is(again.body.hold_id, results[0]!.body.hold_id);
    },
  );

  test.serial('the two webs share one rate-limit budget per key', async (t) => {
    const limited = await ops('partner:create', '--name', 'Limited Partner', '--rate-limit', '10');
    const statuses = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        call(web(i), 'GET', '/api/v1/partner/venues', { key: limited.api_key as string }).then(
          (r) => r.status,
        ),
      ),
    );
    t.is(statuses.filter((status) => status === 200).length, 10);
    t.is(statuses.filter((status) => status === 429).length, 20);
  });

  test.serial('the workers deliver every event once, signed', async (t) => {
    const { world, db, receiver } = s();
    const events: string[] = await db('events').where({ venue_id: world.venueId }).pluck('id');
    t.true(events.length >= 6 + 6 + 1 + 1, `${events.length} events`);
    const received = () => receiver.received.map((r) => r.event?.event_id);
    await waitFor(() => events.every((id) => received().includes(id)), { timeout: 30_000, interval: 200 });
    await new Promise((resolve) => setTimeout(resolve, 500)); // room for a duplicate to show up
    t.deepEqual(receiver.received.map((r) => r.rejection).filter(Boolean), [], 'every signature verifies');
    t.is(receiver.received.length, events.length, 'each event once');
    t.deepEqual([...new Set(received())].sort(), [...events].sort());
    const { rows: undelivered } = await db.raw<{ rows: unknown[] }>(
      `select d.id, d.status from webhook_deliveries d where d.status <> 'delivered'
       union all
       select j.id, j.state::text from pgboss.job j
        where j.name = 'webhook.deliver' and j.state in ('created', 'retry', 'active')`,
    );
    t.deepEqual(undelivered, []);
  });

  test.serial('webs and workers stop with exit 0 on SIGTERM', async (t) => {
    for (const p of [...s().webs.map((w) => w.process), ...s().workers]) t.is(await p.stop(), 0, p.output());
  });
}
