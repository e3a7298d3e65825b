/**
 * The process roles of CONTRACT.md, run as real processes: two `web` processes share one rate-limit
 * budget per key, `web` and `worker` stop with exit 0 on SIGTERM (within their bounds even when
 * the database has gone silent, as in a network partition, where a statement unanswered also ends
 * in 503 rather than a hang), bad configuration stops a process with one line naming the variable,
 * and `migrate` is repeatable.
 */
import test, { type ExecutionContext } from 'ava';
import { execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { connect, createServer as createNetServer, type Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import pg from 'pg';
import { dropDatabase, ensureDatabase, withDatabase } from '../db/postgres/database-url.ts';
import { useTestDatabase } from './helpers/database.ts';
import { makeBookingWorld } from './helpers/booking.ts';
import { makePartner, makeVenue } from './helpers/factories.ts';
import { eventsArrive, openStream, type OpenStream } from './helpers/feed.ts';
import type { TestServer } from './helpers/http.ts';
import { ROOT as root, startProcess, type Started } from './helpers/processes.ts';
import { waitFor } from './helpers/wait.ts';
import { assertDocumented } from './helpers/openapi.ts';

const database = useTestDatabase(test);

/** `script` on this file's database. */
const start = (script: string, env: Record<string, string> = {}): Started =>
  startProcess(script, { DATABASE_URL: database().url, ...env });

const stop = (process: Started) => process.stop();

test('two web processes enforce one shared budget per key, and stop with exit 0 on SIGTERM', async (t) => {
  const { apiKey } = await makePartner(database().db, { rateLimit: 10 });
  const webs = [start('api/main.ts'), start('api/main.ts')];
  try {
    const ports = await Promise.all(webs.map(async (w) => (await w.logLine('web listening')).port as number));
    const statuses = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        fetch(`http://127.0.0.1:${ports[i % 2]}/api/v1/partner/venues`, {
          headers: { 'x-api-key': apiKey },
        }).then((r) => r.status),
      ),
    );
    t.is(statuses.filter((s) => s === 200).length, 10);
    t.is(statuses.filter((s) => s === 429).length, 20);
  } finally {
    for (const web of webs) t.is(await stop(web), 0, web.output());
  }
  for (const web of webs) t.true(web.output().includes('"web stopped"'), web.output());
});

test('SIGTERM with availability streams open: each ends within 1 s with nothing more sent, and web exits 0 within 10 s', async (t) => {
  const w = await makeBookingWorld(database().db);
  const web = start('api/main.ts');
  try {
    const { streams } = await threeStreams(web, w);
    const { code, signalled } = await stopWithStreams(t, web, streams);
    t.is(code, 0, web.output());
    t.true(Date.now() - signalled <= 10_000);
    for (const s of streams)
      t.deepEqual(
        s.events().map((e) => e.event),
        ['hello'],
        'nothing after hello',
      );
  } finally {
    await stop(web);
  }
  t.true(web.output().includes('"web stopped"'), web.output());
});

test('SIGTERM frees every stream place before web exits, however slowly the database frees them', async (t) => {
  const { db } = database();
  const partners = await Promise.all(Array.from({ length: 10 }, () => makePartner(db)));
  const venueId = await makeVenue(db, { grantTo: partners.map((p) => p.partnerId) });
  const web = start('api/main.ts');
  let unlock = () => {};
  let lockHeld = Promise.resolve();
  try {
    const { port } = await web.logLine('web listening');
    const server = { url: `http://127.0.0.1:${port as number}` } as TestServer;
    const streams = await Promise.all(
      partners.flatMap((p) => [1, 2, 3, 4, 5].map(() => openStream(server, p.apiKey, { venue_id: venueId }))),
    );
    await Promise.all(streams.map((s) => eventsArrive(s, 1)));
    // The places are freed slowly: more frees wait than the pool has connections when the stop
    // comes to close the pool.
    const locked = new Promise<void>((resolve) => {
      lockHeld = db.transaction(async (trx) => {
        await trx.raw('lock table availability_streams in exclusive mode');
        resolve();
        await new Promise<void>((r) => (unlock = r));
      });
    });
    await locked;
    // Half the clients hang up as the process is told to stop (a deploy cutting connections at its
    // load balancer as well); the service ends the rest.
    streams.forEach((s, i) => i % 2 === 0 && s.close());
    const code = web.stop();
    await sleep(2_000);
    unlock();
    t.is(await code, 0, web.output());
  } finally {
    unlock();
    await lockHeld;
    await stop(web);
  }
  // This test's partners only: the file's other tests share the database, and one of them leaves
  // places behind on purpose (a database that does not answer cannot free them).
  const { rows } = await db.raw<{ rows: { n: number }[] }>(
    'select count(*)::int as n from availability_streams where partner_id = any(?)',
    [partners.map((p) => p.partnerId)],
  );
  t.is(rows[0]!.n, 0, 'every place freed (a place left behind counts for 60 s against its partner)');
  t.false(web.output().includes('could not free'), web.output());
});

test('SIGTERM with streams open, a request waiting and the database unreachable (its packets lost): streams end within 1 s, web exits 0 within 10 s', async (t) => {
  const w = await makeBookingWorld(database().db);
  const { url, proxy } = await throughBlackHole(t);
  const web = start('api/main.ts', { DATABASE_URL: url });
  try {
    const { server, streams } = await threeStreams(web, w);
    // As a network partition does: nothing sent either way arrives, nothing is refused, so every
    // statement and every new connection waits for an answer that never comes.
    proxy.swallow();
    // A request whose statement waits on it when the stop comes: the drain's deadline cuts it.
    const waiting = fetch(`${server.url}/api/v1/partner/venues`, { headers: { 'x-api-key': w.apiKey } }).then(
      (res) => `answered ${res.status}`,
      () => 'cut',
    );
    await sleep(300);
    const { code, signalled } = await stopWithStreams(t, web, streams);
    t.is(code, 0, web.output());
    const took = Date.now() - signalled;
    t.true(took <= 10_000, `web exited ${took} ms after SIGTERM`);
    t.is(await waiting, 'cut');
  } finally {
    await stop(web);
  }
  t.true(web.output().includes('"web stopped"'), web.output());
  t.true(web.output().includes('the database did not answer'), web.output());
});

test('a statement the database never answers (its packets lost) ends in 503 after the statement timeout and 5 s, not a request hanging', async (t) => {
  const w = await makeBookingWorld(database().db);
  const { url, proxy } = await throughBlackHole(t);
  const web = start('api/main.ts', { DATABASE_URL: url, DATABASE_STATEMENT_TIMEOUT_MS: '1000' });
  try {
    const { port } = await web.logLine('web listening');
    const venues = () =>
      fetch(`http://127.0.0.1:${port as number}/api/v1/partner/venues`, {
        headers: { 'x-api-key': w.apiKey },
        signal: AbortSignal.timeout(30_000),
      });
    // Connections in the pool, as a web process at work has them.
    t.deepEqual(await Promise.all([1, 2, 3].map(async () => (await venues()).status)), [200, 200, 200]);
    proxy.swallow();
    const sent = Date.now();
    const res = await venues();
    const took = Date.now() - sent;
    t.is(res.status, 503);
    t.like(await res.json(), { error: 'SERVICE_UNAVAILABLE' });
    // 1 s of statement timeout and 5 s for its answer; a lost connection is not retried.
    t.true(took >= 6_000 && took < 12_000, `answered after ${took} ms`);
    t.like(await web.logLine('a statement had no answer from the database: its connection is cut'), {
      level: 40,
      waited_ms: 6_000,
    });
  } finally {
    await stop(web);
  }
  t.false(web.output().includes('"level":50'), 'a lost database is a warning, not an error');
});

test('SIGTERM to a worker while its database is unreachable (its packets lost): it exits 0 within 35 s', async (t) => {
  const { url, proxy } = await throughBlackHole(t);
  const worker = start('workers/main.ts', { DATABASE_URL: url });
  try {
    await worker.logLine('workers started');
    // Its pollers and LISTEN connection are at work when the network goes silent.
    await sleep(1_000);
    proxy.swallow();
    const signalled = Date.now();
    t.is(await worker.stop(), 0, worker.output());
    const took = Date.now() - signalled;
    // The operator guide's grace period before SIGKILL: 35 s.
    t.true(took <= 35_000, `the worker exited ${took} ms after SIGTERM`);
  } finally {
    await stop(worker);
  }
  t.true(worker.output().includes('the database did not answer'), worker.output());
  t.true(worker.output().includes('"workers stopped"'), worker.output());
});

test('a worker starts pg-boss and stops with exit 0 on SIGTERM', async (t) => {
  const worker = start('workers/main.ts');
  await worker.logLine('workers started');
  t.is(await stop(worker), 0, worker.output());
  t.true(worker.output().includes('"workers stopped"'));
});

test('npm run web and npm run worker, as the Procfile runs them: only JSON lines, and SIGTERM to npm stops the service', async (t) => {
  for (const [script, ready] of [
    ['web', 'web listening'],
    ['worker', 'workers started'],
  ] as const) {
    const npm = spawn('npm', ['run', script], {
      cwd: root,
      env: { ...process.env, DATABASE_URL: database().url, PORT: '0', LOG_LEVEL: 'info' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    npm.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    npm.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const exited = once(npm, 'close') as Promise<[number | null]>;
    await waitFor(() => output.includes(`"msg":"${ready}"`), { timeout: 60_000 });
    const node = jsonLines(t, output).find((line) => line.msg === ready)!.pid as number;
    t.not(node, npm.pid, 'npm runs the service as a process of its own');
    npm.kill('SIGTERM');
    const [code] = await exited;
    t.is(code, 0, output);
    t.throws(() => process.kill(node, 0), { code: 'ESRCH' }, `${script}: the service stopped with npm`);
    jsonLines(t, output);
  }
});

test('invalid configuration stops a process at start with one line naming the variable (JSON from web and worker)', async (t) => {
  for (const [script, env, name] of [
    ['api/main.ts', { PORT: 'abc' }, 'PORT'],
    ['api/main.ts', { DATABASE_URL: 'postgres://postgres@[::1:5432/booking' }, 'DATABASE_URL'],
    ['api/main.ts', { DATABASE_URL: '' }, 'DATABASE_URL'],
    ['workers/main.ts', { SERVICE_ENV: 'staging' }, 'SERVICE_ENV'],
    ['workers/main.ts', { WEBHOOK_RETRY_DELAYS: '99999999999999,1,1,1' }, 'WEBHOOK_RETRY_DELAYS'],
    ['db/schema/migrate.ts', { DATABASE_URL: '' }, 'DATABASE_URL'],
  ] as const) {
    const bad = start(script, env);
    const code = await bad.exited;
    t.is(code, 1, script);
    t.is(bad.output().trim().split('\n').length, 1, bad.output());
    const line =
      script === 'db/schema/migrate.ts' ? bad.output() : (jsonLines(t, bad.output())[0]!.msg as string);
    t.regex(line, new RegExp(`^invalid configuration: ${name} `), `${script} ${JSON.stringify(env)}`);
  }
});

/** Every line a process printed, each of which must be a JSON object. */
function jsonLines(t: ExecutionContext, output: string): Record<string, unknown>[] {
  return output
    .trim()
    .split('\n')
    .map((line) => {
      try {
        return JSON.parse(line) as Record<string, unknown>;
      } catch {
        t.fail(`not a JSON line: ${line}`);
        return {};
      }
    });
}

test('web and worker started before their database wait for it, print only JSON, and stop with exit 0', async (t) => {
  const nowhere = 'postgres://postgres@127.0.0.1:1/booking';
  for (const [script, ready] of [
    ['api/main.ts', 'web listening'],
    ['workers/main.ts', 'workers started'],
  ] as const) {
    const waiting = start(script, { DATABASE_URL: nowhere });
    await waiting.logLine('waiting for the database');
    t.is(await stop(waiting), 0, waiting.output());
    const lines = jsonLines(t, waiting.output());
    t.false(lines.some((line) => line.msg === ready));
    t.false(
      lines.some((line) => (line.level as number) >= 50),
      waiting.output(),
    );
  }
});

test('web waiting for its database answers on PORT: live, not ready, and 503 to the API; then serves', async (t) => {
  // A port where the database will be: nothing listens there yet.
  const dbPort = await freePort();
  const url = new URL(database().url);
  const later = new URL(database().url);
  later.hostname = '127.0.0.1';
  later.port = String(dbPort);
  const { web, port } = await startWebOnPort('waiting for the database', { DATABASE_URL: later.toString() });
  try {
    const get = async (path: string) => {
      const res = await fetch(`http://127.0.0.1:${port}${path}`);
      return {
        status: res.status,
        body: (await res.json()) as Record<string, unknown>,
        headers: res.headers,
      };
    };
    t.like(await get('/health/live'), { status: 200, body: { status: 'ok' } });
    t.like(await get('/api/v1/health/ready'), {
      status: 503,
      body: { status: 'unavailable', reason: 'starting: waiting for the database' },
    });
    t.like(await get('/health'), { status: 503, body: { status: 'unavailable' } });
    const api = await get('/api/v1/partner/venues');
    t.like(api, { status: 503, body: { error: 'SERVICE_UNAVAILABLE' } });
    t.is(api.headers.get('retry-after'), '1');
    t.is(api.body.request_id, api.headers.get('x-request-id'));
    // Every answer while starting is one the document lists for its route.
    for (const operation of [
      'GET /health/live',
      'GET /health/ready',
      'GET /health',
      'GET /openapi.json',
      'GET /docs',
      'GET /partner/venues',
      'POST /bookings/hold',
    ]) {
      const [method, path] = operation.split(' ') as [string, string];
      const res = await fetch(`http://127.0.0.1:${port}/api/v1${path}`, { method });
      const text = await res.text();
      assertDocumented(t, operation, {
        status: res.status,
        headers: res.headers,
        text,
        body: JSON.parse(text),
      });
    }
    // The database appears (a relay to the real one): the same listener serves the API.
    const relay = createNetServer((client) => {
      const upstream = connect(Number(url.port || 5432), url.hostname);
      client.pipe(upstream).pipe(client);
      client.on('error', () => upstream.destroy());
      upstream.on('error', () => client.destroy());
    });
    relay.listen(dbPort, '127.0.0.1');
    t.teardown(() => relay.close());
    await web.logLine('web listening');
    t.like(await get('/health/ready'), { status: 200 });
    t.is((await get('/api/v1/partner/venues')).status, 401, 'the API answers: a key is missing');
  } finally {
    t.is(await stop(web), 0, web.output());
  }
});

test('web and worker on a database never migrated wait for npm run migrate, live and not ready; then serve', async (t) => {
  const { adminUrl } = database();
  const name = `bt_unmigrated_${Date.now()}`;
  await ensureDatabase(adminUrl, name);
  const url = withDatabase(adminUrl, name);
  const [{ web, port }, { process: worker, port: metricsPort }] = await Promise.all([
    startWebOnPort('waiting for the migrations', { DATABASE_URL: url }),
    startOnPort('workers/main.ts', 'METRICS_PORT', 'waiting for the migrations', { DATABASE_URL: url }),
  ]);
  try {
    const pending = /^starting: waiting for npm run migrate \(\d+ migrations pending\)$/;
    for (const ready of [
      `http://127.0.0.1:${port}/health/ready`,
      `http://127.0.0.1:${metricsPort}/health/ready`,
    ]) {
      const res = await fetch(ready);
      t.is(res.status, 503);
      t.regex(((await res.json()) as { reason: string }).reason, pending);
    }
    t.is((await fetch(`http://127.0.0.1:${port}/health/live`)).status, 200);
    const api = await fetch(`http://127.0.0.1:${port}/api/v1/partner/venues`);
    t.is(api.status, 503);
    t.is(api.headers.get('retry-after'), '1');

    await promisify(execFile)(process.execPath, ['db/schema/migrate.ts'], {
      cwd: root,
      env: { ...process.env, DATABASE_URL: url },
    });
    await Promise.all([web.logLine('web listening'), worker.logLine('workers started')]);
    t.is((await fetch(`http://127.0.0.1:${port}/health/ready`)).status, 200);
    t.is((await fetch(`http://127.0.0.1:${metricsPort}/health/ready`)).status, 200);
    t.is((await fetch(`http://127.0.0.1:${port}/api/v1/partner/venues`)).status, 401, 'the API answers');
  } finally {
    t.is(await stop(web), 0, web.output());
    t.is(await stop(worker), 0, worker.output());
    await dropDatabase(adminUrl, name);
  }
  for (const process of [web, worker]) {
    t.false(
      jsonLines(t, process.output()).some((line) => (line.level as number) >= 50),
      process.output(),
    );
  }
});

test('web started while a migrate is under way waits for it to finish', async (t) => {
  // The migrate's lock, held as a migrate holds it while it changes the schema.
  const migrating = new pg.Client({ connectionString: database().url });
  await migrating.connect();
  t.teardown(() => migrating.end());
  await migrating.query("select pg_advisory_lock('7165064483209717537'::bigint)");
  const { web, port } = await startWebOnPort('waiting for the migrations');
  try {
    const res = await fetch(`http://127.0.0.1:${port}/health/ready`);
    t.like(await res.json(), { reason: 'starting: waiting for npm run migrate to finish' });
    t.false(web.output().includes('web listening'));
    await migrating.query("select pg_advisory_unlock('7165064483209717537'::bigint)");
    await web.logLine('web listening');
    t.is((await fetch(`http://127.0.0.1:${port}/health/ready`)).status, 200);
  } finally {
    t.is(await stop(web), 0, web.output());
  }
});

/**
 * `script` listening on a port picked beforehand (for a test that reaches it before it logs its
 * port), passed in `portVariable` (PORT, METRICS_PORT), once it has logged `ready`. A port taken
 * between the pick and the listen (another test's process, or the ephemeral port of an outgoing
 * connection: a CI run saw EADDRINUSE) is picked again.
 */
async function startOnPort(
  script: string,
  portVariable: string,
  ready: string,
  env: Record<string, string> = {},
): Promise<{ process: Started; port: number }> {
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    const started = start(script, { ...env, [portVariable]: String(port) });
    try {
      await started.logLine(ready);
      return { process: started, port };
    } catch (err) {
      if (attempt === 5 || !started.output().includes('EADDRINUSE')) throw err;
    }
  }
}

/** `api/main.ts` on a port picked beforehand, once it has logged `ready` (startOnPort). */
async function startWebOnPort(
  ready: string,
  env: Record<string, string> = {},
): Promise<{ web: Started; port: number }> {
  const { process, port } = await startOnPort('api/main.ts', 'PORT', ready, env);
  return { web: process, port };
}

/** Three availability streams of `w`'s venue on `web`, each past its `hello`. */
async function threeStreams(
  web: Started,
  w: { apiKey: string; venueId: string },
): Promise<{ server: TestServer; streams: OpenStream[] }> {
  const { port } = await web.logLine('web listening');
  const server = { url: `http://127.0.0.1:${port as number}` } as TestServer;
  const streams = await Promise.all(
    [1, 2, 3].map(() => openStream(server, w.apiKey, { venue_id: w.venueId })),
  );
  await Promise.all(streams.map((s) => eventsArrive(s, 1)));
  return { server, streams };
}

/** SIGTERM to `web`: each of `streams` must end within 1 s; its exit code, and when it was signalled. */
async function stopWithStreams(
  t: ExecutionContext,
  web: Started,
  streams: OpenStream[],
): Promise<{ code: number | null; signalled: number }> {
  const signalled = Date.now();
  const ends = streams.map((s) => s.ended.then(() => Date.now() - signalled));
  const code = web.stop();
  for (const took of await Promise.all(ends)) t.true(took <= 1_000, `a stream ended after ${took} ms`);
  return { code: await code, signalled };
}

/** This file's database through a black-hole proxy (below), closed when the test ends. */
async function throughBlackHole(t: ExecutionContext): Promise<{ url: string; proxy: { swallow(): void } }> {
  const proxy = await blackHoleProxy(new URL(database().url));
  t.teardown(() => proxy.close());
  const url = new URL(database().url);
  url.host = `127.0.0.1:${proxy.port}`;
  return { url: url.toString(), proxy };
}

/**
 * A TCP proxy to `target`'s host and port that can turn into a black hole: after `swallow()` it
 * reads and drops whatever either side sends and accepts new connections without ever connecting
 * them, as a network partition looks to the service (no refusal, no reset, only silence).
 */
async function blackHoleProxy(target: URL): Promise<{ port: number; swallow(): void; close(): void }> {
  let swallowing = false;
  const sockets = new Set<Socket>();
  const track = (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => socket.destroy());
  };
  const drop = (socket: Socket) => {
    socket.unpipe();
    socket.removeAllListeners('data');
    socket.on('data', () => undefined);
  };
  // Half-open allowed: a socket the client ends is not ended back (silence answers a FIN too).
  const server = createNetServer({ allowHalfOpen: true }, (client) => {
    track(client);
    if (swallowing) return drop(client);
    const upstream = connect({
      port: Number(target.port || 5432),
      host: target.hostname,
      allowHalfOpen: true,
    });
    track(upstream);
    client.pipe(upstream);
    upstream.pipe(client);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    port: (server.address() as { port: number }).port,
    swallow() {
      swallowing = true;
      for (const socket of sockets) drop(socket);
    },
    close() {
      server.close();
      for (const socket of sockets) socket.destroy();
    },
  };
}

/** A TCP port nothing listens on (just now). */
async function freePort(): Promise<number> {
  const probe = createNetServer().listen(0, '127.0.0.1');
  await once(probe, 'listening');
  const { port } = probe.address() as { port: number };
  probe.close();
  await once(probe, 'close');
  return port;
}

test('a database that refuses outright stops web and worker with one fatal JSON line', async (t) => {
  const missing = database().url.replace(/\/[^/]*$/, '/no_such_database');
  for (const script of ['api/main.ts', 'workers/main.ts']) {
    const refused = start(script, { DATABASE_URL: missing });
    const code = await refused.exited;
    t.is(code, 1, refused.output());
    const fatal = jsonLines(t, refused.output()).filter((line) => line.level === 60);
    t.is(fatal.length, 1, refused.output());
    t.is(fatal[0]!.msg, 'could not start');
  }
});

// Serial (ava runs serial tests first, before the file's others start their processes): the
// exiting process waits at most 2 s for a write under way, and beside a dozen other processes
// of this file starting at once the write of its last lines ran past that (a local run).
test.serial(
  'a process that fails to start writes every line it logged, the fatal one last, even when its thread pool is busy',
  async (t) => {
    // Asynchronous log writes run on libuv's thread pool: with the pool busy, the write under way
    // when the process exited was lost (a CI run saw a failed start print nothing at all).
    for (const lines of [0, 100]) {
      const child = spawn(process.execPath, ['test/helpers/fails-after-logging.ts'], {
        cwd: root,
        env: { ...process.env, LINES: String(lines), BUSY_MS: '200' },
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      let output = '';
      child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
      const [code] = (await once(child, 'close')) as [number];
      t.is(code, 1);
      const printed = jsonLines(t, output);
      t.deepEqual(
        printed.slice(0, -1).map((line) => line.i),
        Array.from({ length: lines }, (_, i) => i),
        output,
      );
      t.like(printed.at(-1), { level: 60, msg: 'could not start' }, output);
    }
  },
);

test('a process is seen to exit only with all it wrote read: the last of many lines is there', async (t) => {
  // A chunk of stdout may end mid-line: the helper parsed every line of what it had and threw on the
  // cut one. And at 'exit' the child's last writes may still be in the pipe (a CI run saw web's
  // "web stopped" missing after a clean exit 0): the helper waits for 'close', when both pipes ended.
  const chatty = start('test/helpers/fails-after-logging.ts', { LINES: '20000', BUSY_MS: '0' });
  t.is(await chatty.exited, 1);
  const printed = jsonLines(t, chatty.output());
  t.is(printed.length, 20_001);
  t.like(printed.at(-1), { level: 60, msg: 'could not start' });
});

test('a database connection lost with nothing listening is a warning, not a crash; any other uncaught error still is', async (t) => {
  // pg-boss removes every listener of its LISTEN connection before ending it at stop: a termination
  // arriving in between was thrown as an uncaught 'error' event, and a stopping worker exited 1.
  const orphaned = start('test/helpers/orphaned-connection.ts');
  const { backend_pid: pid } = await orphaned.logLine('connection orphaned');
  await database().db.raw('select pg_terminate_backend(?)', [pid as number]);
  await orphaned.logLine('a database connection was lost with nothing listening for it');
  t.is(orphaned.child.exitCode, null, orphaned.output());
  t.is(await stop(orphaned), 0, orphaned.output());
  t.false(orphaned.output().includes('"level":60'), orphaned.output());

  const buggy = start('test/helpers/orphaned-connection.ts', { THROW: '1' });
  const code = await buggy.exited;
  t.is(code, 1, buggy.output());
  t.like(jsonLines(t, buggy.output()).at(-1), { level: 60, msg: 'uncaught error' }, buggy.output());
});

test('migrate can run again on a migrated database', async (t) => {
  const { stdout } = await promisify(execFile)(process.execPath, ['db/schema/migrate.ts'], {
    cwd: root,
    env: { ...process.env, DATABASE_URL: database().url, LOG_LEVEL: 'info' },
  });
  t.true(stdout.includes('database is up to date'));
});

test('npm start migrates, seeds an empty database once, serves, and stops with exit 0', async (t) => {
  const { adminUrl } = database();
  const name = `bt_start_${Date.now()}`;
  await ensureDatabase(adminUrl, name);
  const url = withDatabase(adminUrl, name);
  try {
    const first = start('start.ts', { DATABASE_URL: url });
    const { port } = await first.logLine('web listening');
    const key = /x-api-key: ([0-9a-f]{64})/.exec(first.output())?.[1];
    t.truthy(key, 'the demo key is printed');
    const res = await fetch(`http://127.0.0.1:${port as number}/api/v1/partner/venues`, {
      headers: { 'x-api-key': key! },
    });
    t.is(((await res.json()) as { data: { name: string }[] }).data[0]?.name, 'Demo Sports Arena');
    t.is(await stop(first), 0, first.output());

    // With METRICS_PORT, one listener serves the web's metrics and the workers' alike.
    const second = start('start.ts', { DATABASE_URL: url, METRICS_PORT: '0' });
    const metricsPort = (await second.logLine('metrics listening')).port as number;
    await second.logLine('web listening');
    t.false(second.output().includes('x-api-key'), 'a database with partners is not seeded again');
    const scraped = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
    for (const family of ['http_server_request_duration_seconds', 'queue_jobs', 'db_pool_connections']) {
      t.regex(scraped, new RegExp(`^# TYPE ${family} `, 'm'));
    }
    t.is((await fetch(`http://127.0.0.1:${metricsPort}/health/ready`)).status, 200);
    t.is(await stop(second), 0, second.output());
  } finally {
    await dropDatabase(adminUrl, name);
  }
});

test('the request log names the route template; health probes log at debug unless they fail', async (t) => {
  const { apiKey } = await makePartner(database().db);
  const requestLines = (web: Started) =>
    web
      .output()
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .filter((line) => line.msg === 'request');
  for (const level of ['info', 'debug']) {
    const web = start('api/main.ts', { LOG_LEVEL: level });
    try {
      const { port } = await web.logLine('web listening');
      const get = (path: string) =>
        fetch(`http://127.0.0.1:${port as number}${path}`, { headers: { 'x-api-key': apiKey } });
      for (const path of ['/health', '/health/live', '/api/v1/health/ready'])
        t.is((await get(path)).status, 200);
      t.is((await get('/api/v1/partner/venues/2d4f6a8c-0e1b-4c3d-a5e7-f9b1d3c5e7a9')).status, 404);
      t.is((await get('/api/v1/nowhere')).status, 404);
      // The log line follows the response; the last request's line comes after the others'.
      await waitFor(() => requestLines(web).some((l) => l.path === '/api/v1/nowhere'));
      const lines = requestLines(web);
      t.like(
        lines.find((l) => l.path === '/api/v1/partner/venues/2d4f6a8c-0e1b-4c3d-a5e7-f9b1d3c5e7a9'),
        { route: '/api/v1/partner/venues/{venueId}', status: 404, level: 30 },
      );
      t.like(
        lines.find((l) => l.path === '/api/v1/nowhere'),
        { route: 'unmatched', status: 404 },
      );
      const probes = lines.filter((l) => String(l.route).includes('/health'));
      if (level === 'info') t.deepEqual(probes, [], 'no probe at info');
      else {
        t.deepEqual(
          probes.map((l) => [l.route, l.level]),
          // An unprefixed alias is logged under its route's template, prefix and all.
          [
            ['/api/v1/health', 20],
            ['/api/v1/health/live', 20],
            ['/api/v1/health/ready', 20],
          ],
        );
      }
    } finally {
      t.is(await stop(web), 0, web.output());
    }
  }
});
