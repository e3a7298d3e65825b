/**
 * When the database cannot serve, or refuses a value: an unreachable server, a lock held too long,
 * a statement that runs too long are all a clean 503 SERVICE_UNAVAILABLE with Retry-After, never a
 * 500 or a request that hangs holding a pool slot; the write is not spent and succeeds once the
 * database serves again. A value PostgreSQL refuses (SQLSTATE class 22) that validation let
 * through is a 400, logged as the validation gap it is. (A real server restart under load is
 * test/faults.test.ts.)
 */
import test from 'ava';
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { defineRoute } from '../../api/route.ts';
import { routes } from '../../api/routes/index.ts';
import { createDb, type Knex } from '../../db/postgres/knex.ts';
import { gridSlots, hold, makeBookingWorld } from '../helpers/booking.ts';
import { useTestDatabase } from '../helpers/database.ts';
import { call, startApp, type TestServer } from '../helpers/http.ts';
import { capturingLogger } from '../helpers/log.ts';
import { assertDocumented } from '../helpers/openapi.ts';
import { VALIDATION_GAP } from '../../api/middleware/errors.ts';

const database = useTestDatabase(test);
const closers: (() => Promise<void>)[] = [];
test.after.always(async () => {
  for (const close of closers.reverse()) await close();
});

/** An app on its own pool with these options, closed after the file. */
async function appWith(options: Parameters<typeof createDb>[1], url = database().url): Promise<TestServer> {
  const db = createDb(url, { poolMax: 4, ...options });
  const server = await startApp(database(), { db });
  closers.push(
    () => db.destroy(),
    () => server.close(),
  );
  return server;
}

test('an unreachable database: keyed routes and health answer 503, never 500', async (t) => {
  const server = await appWith({}, 'postgres://postgres@127.0.0.1:1/nowhere');
  const res = await call(server, 'GET', '/api/v1/partner/venues', { key: 'a'.repeat(64) });
  t.is(res.status, 503, res.text);
  t.is(res.body.error, 'SERVICE_UNAVAILABLE');
  t.is(res.headers.get('retry-after'), '1');
  assertDocumented(t, 'GET /partner/venues', res);
  const health = await call(server, 'GET', '/health');
  t.is(health.status, 503);
  t.is(health.body.status, 'unavailable');
});

/** Holds the court's row lock (as a stuck transaction would) until `release` is called. */
/** A rival transaction holding the window's lock, as a hold of that window does while it commits. */
async function lockWindow(db: Knex, resourceId: string, start: Date, end: Date) {
  const rival = await db.transaction();
  await rival.raw('select lock_reservation_windows(array[?::uuid], tstzrange(?, ?))', [
    resourceId,
    start,
    end,
  ]);
  return () => rival.rollback();
}

// In transaction pool mode the limits are SET LOCAL in every transaction instead of session settings.
for (const [name, options] of [
  ['a lock not granted within lock_timeout', { lockTimeoutMs: 300 }],
  ['a statement past statement_timeout', { statementTimeoutMs: 300 }],
  [
    'a lock not granted within lock_timeout (transaction pool mode)',
    { lockTimeoutMs: 300, poolMode: 'transaction' },
  ],
  [
    'a statement past statement_timeout (transaction pool mode)',
    { statementTimeoutMs: 300, poolMode: 'transaction' },
  ],
] as const) {
  test(`${name} is 503 with Retry-After; the key is not spent and the retry succeeds`, async (t) => {
    const { db } = database();
    const w = await makeBookingWorld(db);
    const [slot] = await gridSlots(db, w.venueId, w.court);
    const server = await appWith(options);
    const body = {
      venue_id: w.venueId,
      resource_id: w.court,
      slot_start: slot!.slot_start,
      idempotency_key: randomUUID(),
    };
    const release = await lockWindow(db, w.court, slot!.slot_start, slot!.slot_end);
    try {
      const stuck = await hold(server, w.apiKey, body);
      t.is(stuck.status, 503, stuck.text);
      t.is(stuck.body.error, 'SERVICE_UNAVAILABLE');
      t.is(stuck.headers.get('retry-after'), '1');
      assertDocumented(t, 'POST /bookings/hold', stuck);
    } finally {
      await release();
    }
    t.falsy(await db('idempotency_keys').where({ key: body.idempotency_key }).first());
    const retried = await hold(server, w.apiKey, body);
    t.is(retried.status, 201, retried.text);
  });
}

test('a value the database refuses that validation let through is a 400, logged as a validation gap below error level', async (t) => {
  const { log, lines } = capturingLogger();
  // A route with a gap on purpose: any string reaches a `date` cast.
  const gap = defineRoute({
    method: 'POST',
    path: '/test/gap',
    operationId: 'testGap',
    summary: 'Gap',
    description: 'Casts its input to a date.',
    tag: 'Test',
    auth: false,
    body: z.object({ value: z.string() }),
    responses: { 200: { description: 'The date.' } },
    async handler({ body }, { db }) {
      const { rows } = await db.raw<{ rows: { d: string }[] }>('select ?::date as d', [body.value]);
      return { status: 200, body: rows[0] };
    },
  });
  const server = await startApp({ ...database(), log }, { routes: [...routes, gap] });
  closers.push(() => server.close());
  for (const value of ['0000-01-01', 'not a date', 'a\u0000b']) {
    const res = await call(server, 'POST', '/api/v1/test/gap', { body: { value } });
    t.is(res.status, 400, `${JSON.stringify(value)}: ${res.text}`);
    t.is(res.body.error, 'VALIDATION_ERROR');
    t.deepEqual(res.body.details, [
      { field: '', message: 'a value could not be stored as sent', in: 'body' },
    ]);
  }
  const gaps = lines.filter((line) => line.msg === VALIDATION_GAP);
  t.is(gaps.length, 3);
  t.true(gaps.every((line) => line.level === 40 && line.path === '/api/v1/test/gap'));
  // CONTRACT.md, "Error logs": a request answered below 500 logs nothing at error or above.
  t.deepEqual(
    lines.filter((line) => Number(line.level) >= 50),
    [],
  );
});
