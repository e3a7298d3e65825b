/**
 * Faults of a real deployment, with the service run as processes (`web`, `worker`) on a PostgreSQL
 * of this file's own — an embedded one, whatever DATABASE_URL says, because the test restarts it:
 *
 * - PostgreSQL stopped and started again under a hold → confirm load and a webhook stream: while it
 *   is down web answers 503 (never 500, never a request left hanging) and /health says so; once it
 *   is back web and worker recover by themselves, no event is lost, no job stays active, no hold or
 *   booking is half-made, and an availability stream open across the outage lists every change once.
 * - SIGTERM to web under load: every request web started on is answered, and every answered write
 *   is in the database.
 * - SIGTERM to a worker in the middle of deliveries: it stops cleanly, and a new worker delivers
 *   everything.
 *
 * The clients behave as a careful partner does: a 503 is retried with the same idempotency key.
 */
import test, { type ExecutionContext } from 'ava';
import { randomUUID } from 'node:crypto';
import { request } from 'node:http';
import { setTimeout as pause } from 'node:timers/promises';
import { ensureDatabase, withDatabase } from '../db/postgres/database-url.ts';
import { startEmbeddedPostgres, type EmbeddedServer } from '../db/platform/embedded/server.ts';
import { createDb, type Knex } from '../db/postgres/knex.ts';
import { createLogger } from '../db/platform/log.ts';
import { EVENT_TYPES } from '../db/queries/events.ts';
import { migrate } from '../db/schema/migrate.ts';
import { gridSlots, makeBookingWorld, type GridSlot } from './helpers/booking.ts';
import { idsAfterHello, openStream, pollAll, type OpenStream } from './helpers/feed.ts';
import type { TestServer } from './helpers/http.ts';
import { startProcess, type Started } from './helpers/processes.ts';
import { waitFor } from './helpers/wait.ts';
import { startReceiver, type Receiver } from './helpers/webhooks.ts';

/** No request may take longer than this; a longer one is a hang. */
const REQUEST_TIMEOUT_MS = 15_000;

let server: EmbeddedServer;
let url: string;
let db: Knex;
const log = createLogger(process.env.TEST_LOG_LEVEL ?? 'silent');

test.before(async () => {
  server = await startEmbeddedPostgres('test-faults-pg', { log });
  const name = `faults_${randomUUID().slice(0, 8)}`;
  await ensureDatabase(server.adminUrl, name);
  url = withDatabase(server.adminUrl, name);
  await migrate(url, log);
  db = createDb(url, { poolMax: 4 });
});
test.after.always(async () => {
  await db?.destroy();
  await server?.stop();
});

/** The service's environment: quick webhook retries, so a test sees them. */
const serviceEnv = () => ({
  DATABASE_URL: url,
  SERVICE_ENV: 'local',
  WEBHOOK_RETRY_DELAYS: '1,1,1,1',
  WEBHOOK_TIMEOUT_MS: '3000',
});

/** Starts `script` for one test and stops it (SIGTERM) when the test ends. */
async function run(t: ExecutionContext, script: string, ready: string): Promise<Started & { port: number }> {
  const started = startProcess(script, serviceEnv());
  t.teardown(() => started.stop());
  const line = await started.logLine(ready);
  return { ...started, port: Number(line.port ?? 0) };
}

/** One HTTP exchange on a connection of its own (no keep-alive, so "in flight" is unambiguous). */
interface Exchange {
  status?: number;
  body?: Record<string, any>;
  /** A network error code: the request was not answered. */
  error?: string;
}

function send(port: number, method: string, path: string, key?: string, body?: unknown): Promise<Exchange> {
  const payload = body === undefined ? undefined : JSON.stringify(body);
  return new Promise((resolve) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        method,
        path,
        agent: false,
        headers: {
          connection: 'close',
          ...(key ? { 'x-api-key': key } : {}),
          ...(payload
            ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) }
            : {}),
        },
        signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
      },
      (res) => {
        let text = '';
        res.on('data', (chunk: Buffer) => (text += chunk.toString()));
        res.on('end', () => {
          let parsed: Record<string, any> | undefined;
          try {
            parsed = JSON.parse(text) as Record<string, any>;
          } catch {
            parsed = undefined;
          }
          resolve({ status: res.statusCode ?? 0, ...(parsed ? { body: parsed } : {}) });
        });
        res.on('error', (err: NodeJS.ErrnoException) => resolve({ error: err.code ?? err.name }));
      },
    );
    req.on('error', (err: NodeJS.ErrnoException) => resolve({ error: err.code ?? err.name }));
    req.end(payload);
  });
}

/** What a load client saw: every answer, and the writes it got a 201 for. */
interface Seen {
  statuses: number[];
  errors: string[];
  /** Idempotency keys of writes that got no answer. */
  unanswered: string[];
  holds: { key: string; holdId: string }[];
  bookings: { key: string; bookingId: string }[];
}

function newSeen(): Seen {
  return { statuses: [], errors: [], unanswered: [], holds: [], bookings: [] };
}

/**
 * A careful partner's write: sent until it is answered with something other than 503 (the body,
 * and so its idempotency key, the same each time), or until `giveUp()` says stop (then undefined).
 */
async function write(
  seen: Seen,
  port: () => number,
  path: string,
  apiKey: string,
  body: Record<string, unknown>,
  giveUp: () => boolean,
): Promise<Exchange | undefined> {
  for (;;) {
    const answer = await send(port(), 'POST', path, apiKey, body);
    if (answer.error) {
      seen.errors.push(answer.error);
      seen.unanswered.push(body.idempotency_key as string);
    } else seen.statuses.push(answer.status!);
    if (answer.status !== undefined && answer.status !== 503) return answer;
    if (giveUp()) return undefined;
    await pause(25);
  }
}

/** Hold → confirm cycles on slots taken from `pool`, until `done()`. */
async function cycles(
  seen: Seen,
  port: () => number,
  apiKey: string,
  venueId: string,
  pool: GridSlot[],
  done: () => boolean,
): Promise<void> {
  while (!done()) {
    const slot = pool.pop();
    if (!slot) return;
    const holdKey = randomUUID();
    const held = await write(
      seen,
      port,
      '/api/v1/bookings/hold',
      apiKey,
      {
        venue_id: venueId,
        resource_id: slot.resource_id,
        slot_start: slot.slot_start.toISOString(),
        slot_duration_minutes: 60,
        idempotency_key: holdKey,
      },
      done,
    );
    if (held?.status !== 201) continue;
    seen.holds.push({ key: holdKey, holdId: held.body!.hold_id as string });
    const confirmKey = randomUUID();
    const confirmed = await write(
      seen,
      port,
      '/api/v1/bookings/confirm',
      apiKey,
      {
        hold_id: held.body!.hold_id,
        payment_reference: 'pay',
        customer_name: 'Asha Rao',
        customer_phone: '9812345678',
        idempotency_key: confirmKey,
      },
      done,
    );
    if (confirmed?.status === 201) {
      seen.bookings.push({ key: confirmKey, bookingId: confirmed.body!.booking_id as string });
    }
  }
}

/** `clients` load clients running hold → confirm cycles at once, until `done()`. */
function load(
  clients: number,
  seen: Seen,
  port: () => number,
  w: { apiKey: string; venueId: string; pool: GridSlot[] },
  done: () => boolean,
): Promise<void[]> {
  return Promise.all(
    Array.from({ length: clients }, () => cycles(seen, port, w.apiKey, w.venueId, w.pool, done)),
  );
}

/** A world on this file's database: a partner, a venue with courts, their slots for some days. */
async function slotPool(days: number) {
  const w = await makeBookingWorld(db);
  const pool: GridSlot[] = [];
  for (let day = 1; day <= days; day++) {
    for (const resource of [w.court, w.halfA, w.halfB])
      pool.push(...(await gridSlots(db, w.venueId, resource, day)));
  }
  return { ...w, pool: pool.sort(() => Math.random() - 0.5) };
}

/**
 * A slot pool, web, and the partner subscribed to every event at an endpoint that answers nothing
 * until `answer()`: attempts stay in flight (each until its deadline).
 */
async function hangingEndpoint(t: ExecutionContext) {
  const w = await slotPool(1);
  const web = await run(t, 'api/main.ts', 'web listening');
  const receiver = await subscribeAll(t, web.port, w.apiKey);
  let hanging = true;
  receiver.respond = () => (hanging ? undefined : 200);
  return { w, web, receiver, answer: () => (hanging = false) };
}

/** Subscribes the partner to every event type, to a receiver that verifies signatures. */
async function subscribeAll(t: ExecutionContext, port: number, apiKey: string): Promise<Receiver> {
  let secret = '';
  const receiver = await startReceiver(() => secret);
  t.teardown(() => receiver.close());
  const res = await send(port, 'POST', '/api/v1/partner/webhooks', apiKey, {
    endpoint_url: receiver.url,
    event_types: [...EVENT_TYPES],
  });
  if (res.status !== 201) throw new Error(JSON.stringify(res));
  secret = res.body!.secret_key as string;
  return receiver;
}

/**
 * The stream, open across the outage, lists what the poll lists after its `hello`: every change of
 * the load, each once, in the feed's order (a change is streamed within 2 s of its commit).
 */
async function assertStreamedAll(
  t: ExecutionContext,
  api: TestServer,
  w: { apiKey: string; venueId: string },
  stream: OpenStream,
): Promise<void> {
  const hello = stream.events()[0]!;
  t.is(hello.event, 'hello');
  const polled = await pollAll(api, w.apiKey, w.venueId, hello.id!);
  t.true(polled.events.length > 0);
  // Generous: the whole suite runs beside this on two cores. On a timeout, what the stream had.
  await waitFor(() => stream.events().length > polled.events.length, { timeout: 30_000 }).catch(
    (err: unknown) => {
      const last = stream.events().at(-1);
      t.log({
        streamed: stream.events().length - 1,
        polled: polled.events.length,
        last: last?.id,
        ended: last?.event,
      });
      throw err;
    },
  );
  t.deepEqual(
    idsAfterHello(stream),
    polled.events.map((e) => e.cursor),
    'the stream lists every change the poll lists, each once, in order',
  );
  t.true(
    stream.events().every((f) => f.event !== 'access_revoked'),
    'and stays open',
  );
}

/** Nothing half-made: every hold, reservation, booking, event and key is whole. */
async function assertWhole(t: ExecutionContext, venueId: string): Promise<void> {
  const { rows } = await db.raw<{ rows: Record<string, number>[] }>(
    `select
       (select count(*) from holds h where h.venue_id = ?
          and (select count(*) from events e where e.hold_id = h.id and e.event_type = 'hold_created') <> 1)
         as holds_without_one_created_event,
       (select count(*) from holds h where h.venue_id = ? and h.status in ('ACTIVE', 'CONFIRMED')
          and (select count(*) from reservations r where r.hold_id = h.id and r.active)
              <> cardinality(resource_units(h.resource_id))) as live_holds_without_their_reservations,
       (select count(*) from holds h where h.venue_id = ? and h.status = 'CONFIRMED'
          and (select count(*) from bookings b where b.hold_id = h.id) <> 1) as confirmed_holds_without_one_booking,
       (select count(*) from bookings b where b.venue_id = ?
          and (select count(*) from events e where e.booking_id = b.id and e.event_type = 'booking_created') <> 1)
         as bookings_without_one_created_event,
       (select count(*) from idempotency_keys where response is null and result is null) as keys_without_a_result`,
    [venueId, venueId, venueId, venueId],
  );
  t.deepEqual(rows[0], {
    holds_without_one_created_event: 0,
    live_holds_without_their_reservations: 0,
    confirmed_holds_without_one_booking: 0,
    bookings_without_one_created_event: 0,
    keys_without_a_result: 0,
  });
}

/** Every answered write is in the database, under its key. */
async function assertAnsweredWritesStored(t: ExecutionContext, seen: Seen): Promise<void> {
  const holds = await db('holds')
    .whereIn(
      'id',
      seen.holds.map((h) => h.holdId),
    )
    .pluck('id');
  t.is(holds.length, seen.holds.length, 'every hold answered 201 exists');
  const bookings = await db('bookings')
    .whereIn(
      'id',
      seen.bookings.map((b) => b.bookingId),
    )
    .pluck('id');
  t.is(bookings.length, seen.bookings.length, 'every booking answered 201 exists');
}

/** Every event of the venue reached the receiver, verified; no job is left active. */
async function assertDeliveredAndSettled(
  t: ExecutionContext,
  venueId: string,
  receiver: Receiver,
): Promise<void> {
  t.teardown(async () => {
    if (t.passed) return;
    const deliveries = await db('webhook_deliveries').groupBy('status').select('status').count({ n: '*' });
    const jobs = await db.raw(
      'select name, state, count(*)::int as n from pgboss.job group by 1, 2 order by 1, 2',
    );
    const received = new Set(receiver.received.map((r) => r.event?.event_id));
    const missing = (
      await db('events').where({ venue_id: venueId }).select('id', 'event_type', 'occurred_at')
    ).filter((e: { id: string }) => !received.has(e.id));
    t.log({ deliveries, jobs: jobs.rows, missing: missing.slice(0, 10), missingCount: missing.length });
  });
  await waitFor(
    async () => {
      const ids: string[] = await db('events').where({ venue_id: venueId }).pluck('id');
      const received = new Set(receiver.received.map((r) => r.event?.event_id));
      return ids.length > 0 && ids.every((id) => received.has(id));
    },
    { timeout: 60_000, interval: 200 },
  );
  // A request the receiver saw may still be an attempt in flight (a hanging endpoint): settled
  // means every delivery of the venue's events was delivered.
  await waitFor(
    async () => {
      const { rows } = await db.raw<{ rows: { n: number }[] }>(
        `select count(*)::int as n from webhook_deliveries d join events e on e.id = d.event_id
          where e.venue_id = ? and d.status <> 'delivered'`,
        [venueId],
      );
      return rows[0]!.n === 0;
    },
    { timeout: 60_000, interval: 200 },
  );
  await waitFor(
    async () => {
      const { rows } = await db.raw<{ rows: { n: number }[] }>(
        "select count(*)::int as n from pgboss.job where state = 'active'",
      );
      return rows[0]!.n === 0;
    },
    { timeout: 60_000, interval: 200 },
  );
}

test.serial(
  'PostgreSQL restarted under load: 503 while it is down, recovery by itself, nothing lost, stuck or half-made',
  async (t) => {
    const w = await slotPool(3);
    const web = await run(t, 'api/main.ts', 'web listening');
    const worker = await run(t, 'workers/main.ts', 'workers started');
    const receiver = await subscribeAll(t, web.port, w.apiKey);
    // An availability stream open across the outage: it stays open and misses nothing.
    const api = { url: `http://127.0.0.1:${web.port}`, db, close: async () => {} };
    const stream = await openStream(api, w.apiKey, { venue_id: w.venueId });
    t.teardown(() => stream.close());
    t.teardown(() => {
      if (t.passed) return;
      const said = web
        .output()
        .split('\n')
        .filter((line) => /availability|stream/.test(line));
      t.log(said.slice(-20).join('\n'));
    });

    const seen = newSeen();
    const health: number[] = [];
    let done = false;
    const running = load(
      4,
      seen,
      () => web.port,
      w,
      () => done,
    );
    const polling = (async () => {
      while (!done) {
        const answer = await send(web.port, 'GET', '/health');
        if (answer.error) seen.errors.push(`health ${answer.error}`);
        else health.push(answer.status!);
        await pause(20);
      }
    })();

    await waitFor(() => seen.bookings.length >= 10, { timeout: 30_000 });
    await server.stop();
    await waitFor(() => health.filter((s) => s === 503).length >= 3 && seen.statuses.includes(503), {
      timeout: 30_000,
    });
    await server.restart();
    const bookedBefore = seen.bookings.length;
    await waitFor(() => seen.bookings.length >= bookedBefore + 10, { timeout: 30_000 });
    done = true;
    await Promise.all([running, polling]);
    await assertStreamedAll(t, api, w, stream);

    t.deepEqual(seen.errors, [], 'every request was answered, none hung or was cut');
    t.deepEqual([...new Set(seen.statuses)].sort(), [201, 503], 'writes answered 201 or 503, never 500');
    t.deepEqual([...new Set(health)].sort(), [200, 503], '/health told the truth');
    await assertAnsweredWritesStored(t, seen);
    await assertWhole(t, w.venueId);
    await assertDeliveredAndSettled(t, w.venueId, receiver);
    for (const process of [web, worker]) {
      const errors = process
        .output()
        .split('\n')
        .filter((line) => line.includes('"level":50'));
      t.deepEqual(errors, [], 'an outage is a warning, not an error, in the logs');
    }
  },
);

test.serial(
  'SIGTERM to web under load: every request it started on is answered, every answer stored',
  async (t) => {
    const w = await slotPool(2);
    const web = await run(t, 'api/main.ts', 'web listening');
    const seen = newSeen();
    let done = false;
    // A client stops at its first refused connection: web is gone.
    const running = load(
      8,
      seen,
      () => web.port,
      w,
      () => done || seen.errors.length > 0,
    );
    await waitFor(() => seen.bookings.length >= 10, { timeout: 30_000 });
    t.is(await web.stop(), 0, web.output());
    done = true;
    await running;

    t.false(
      seen.statuses.some((s) => s >= 500),
      `no 5xx: ${[...new Set(seen.statuses)].join(',')}`,
    );
    // Once web stops listening, new connections are refused, and the kernel resets those it had
    // queued but web never accepted: neither reached web, so neither may have had an effect.
    t.true(
      seen.errors.every((e) => e === 'ECONNREFUSED' || e === 'ECONNRESET'),
      `unanswered only because never received: ${seen.errors.join(',')}`,
    );
    const started = await db('idempotency_keys').whereIn('key', seen.unanswered).pluck('key');
    t.deepEqual(started, [], 'no unanswered write had an effect: every request web started on was answered');
    await assertAnsweredWritesStored(t, seen);
    await assertWhole(t, w.venueId);
  },
);

test.serial(
  'SIGTERM to a worker in the middle of deliveries: it stops cleanly and nothing is lost',
  async (t) => {
    // An endpoint that does not answer (until later) keeps attempts in flight when the signal comes.
    const { w, web, receiver, answer } = await hangingEndpoint(t);

    const seen = newSeen();
    let done = false;
    const running = load(
      1,
      seen,
      () => web.port,
      w,
      () => done || seen.holds.length >= 15,
    );
    const first = await run(t, 'workers/main.ts', 'workers started');
    await waitFor(() => receiver.received.length >= 3, { timeout: 30_000 });
    t.is(await first.stop(), 0, first.output());
    done = true;
    await running;
    answer();
    await run(t, 'workers/main.ts', 'workers started');
    await assertDeliveredAndSettled(t, w.venueId, receiver);
    const unfinished = await db('webhook_attempts').whereNull('finished_at').count({ n: '*' });
    t.is(Number(unfinished[0]!.n), 0, 'every attempt was finished or taken over');
  },
);

test.serial(
  'web and worker started while PostgreSQL is down start by themselves once it is up',
  async (t) => {
    const w = await slotPool(1);
    await server.stop();
    try {
      const web = startProcess('api/main.ts', serviceEnv());
      const worker = startProcess('workers/main.ts', serviceEnv());
      t.teardown(async () => {
        await web.stop();
        await worker.stop();
      });
      await Promise.all([
        web.logLine('waiting for the database'),
        worker.logLine('waiting for the database'),
      ]);
      await server.restart();
      const [{ port }] = await Promise.all([web.logLine('web listening'), worker.logLine('workers started')]);
      const seen = newSeen();
      await cycles(
        seen,
        () => Number(port),
        w.apiKey,
        w.venueId,
        w.pool,
        () => seen.bookings.length >= 1,
      );
      t.is(seen.bookings.length, 1, JSON.stringify(seen));
    } finally {
      await server.restart(); // running again whatever happened (a no-op stop if it runs)
    }
  },
);

/**
 * Closes this file's database to connections, as an operator does for maintenance (`ALTER DATABASE
 * … ALLOW_CONNECTIONS false`, then ending its sessions); returns how to open it again.
 */
async function closeDatabase(t: ExecutionContext): Promise<() => Promise<void>> {
  const name = new URL(url).pathname.slice(1);
  const admin = createDb(server.adminUrl, { poolMax: 1 });
  let open = false;
  const reopen = async () => {
    if (open) return;
    open = true;
    await admin.raw(`alter database "${name}" allow_connections true`);
  };
  t.teardown(async () => {
    await reopen();
    await admin.destroy();
  });
  await admin.raw(`alter database "${name}" allow_connections false`);
  await admin.raw('select pg_terminate_backend(pid) from pg_stat_activity where datname = ?', [name]);
  return reopen;
}

test.serial(
  'a database closed to connections is an outage: 503, never 500, and web started meanwhile waits for it',
  async (t) => {
    const w = await slotPool(1);
    const web = await run(t, 'api/main.ts', 'web listening');
    const reopen = await closeDatabase(t);
    // The database's refusal (55000, "not currently accepting connections") answered 500.
    const slot = w.pool.pop()!;
    const answers = [
      await send(web.port, 'GET', '/api/v1/partner/venues', w.apiKey),
      await send(web.port, 'POST', '/api/v1/bookings/hold', w.apiKey, {
        venue_id: w.venueId,
        resource_id: slot.resource_id,
        slot_start: slot.slot_start.toISOString(),
        slot_duration_minutes: 60,
        idempotency_key: randomUUID(),
      }),
    ];
    t.deepEqual(
      answers.map((a) => [a.status, a.body?.error]),
      [
        [503, 'SERVICE_UNAVAILABLE'],
        [503, 'SERVICE_UNAVAILABLE'],
      ],
    );
    // A web started now waits for the database instead of stopping.
    const later = startProcess('api/main.ts', serviceEnv());
    t.teardown(() => later.stop());
    await later.logLine('waiting for the database');
    await reopen();
    await later.logLine('web listening');
    await waitFor(
      async () => (await send(web.port, 'GET', '/api/v1/partner/venues', w.apiKey)).status === 200,
      {
        timeout: 15_000,
      },
    );
    t.is(later.child.exitCode, null, later.output());
    for (const process of [web, later]) {
      t.false(process.output().includes('"level":50'), 'an outage is a warning, not an error');
    }
  },
);

test.serial(
  'SIGTERM to a worker while its database is closed: it stops anyway, and the attempts are delivered later',
  async (t) => {
    // An endpoint that does not answer: the attempt's outcome comes at its deadline, during the outage.
    const { w, web, receiver, answer } = await hangingEndpoint(t);
    const worker = await run(t, 'workers/main.ts', 'workers started');
    const seen = newSeen();
    await cycles(
      seen,
      () => web.port,
      w.apiKey,
      w.venueId,
      w.pool,
      () => seen.holds.length >= 1,
    );
    await waitFor(() => receiver.received.length >= 1, { timeout: 30_000 });
    const reopen = await closeDatabase(t);
    // It recorded its outcomes for ever while the database refused, and never exited.
    const stopped = await Promise.race([worker.stop(), pause(40_000).then(() => 'still running')]);
    t.is(stopped, 0, worker.output());
    await reopen();
    answer();
    await run(t, 'workers/main.ts', 'workers started');
    await assertDeliveredAndSettled(t, w.venueId, receiver);
  },
);
