/**
 * Attempts over kept-alive connections pooled per origin (workers/webhook-http.ts): consecutive
 * attempts to one endpoint share a connection, concurrent ones open no more than the per-origin
 * limit; a socket is never shared between origins, so every name is checked on the socket it
 * dials; an attempt cut off at its deadline leaves nothing behind for the next; an endpoint closing
 * idle connections costs no attempt; a name that rebinds to 127.0.0.1 gets nothing through a shared
 * client either; an attempt that has ended holds nothing until its deadline.
 */
import test from 'ava';
import { randomUUID } from 'node:crypto';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { MAX_ATTEMPTS } from '../../db/rules/webhook-attempts.ts';
import { startWorkers } from '../../workers/main.ts';
import { PER_ORIGIN } from '../../workers/webhook-dispatcher.ts';
import { NON_PUBLIC_TARGET, WebhookClient } from '../../workers/webhook-http.ts';
import { holdSlot, makeBookingWorld } from '../helpers/booking.ts';
import { testConfig, useTestDatabase } from '../helpers/database.ts';
import { useTestServer } from '../helpers/http.ts';
import { waitFor } from '../helpers/wait.ts';
import { deliveryFor, startEndpoint, startReceiver, subscribe, testResolver } from '../helpers/webhooks.ts';

/** A full collection, at the test's call (V8's own `gc`, exposed for this file). */
setFlagsFromString('--expose-gc');
const collectGarbage = runInNewContext('gc') as () => void;

const database = useTestDatabase(test);
const server = useTestServer(test, database);

test.serial(
  "a worker's attempts to one endpoint share kept-alive connections, at most its per-origin limit",
  async (t) => {
    const { db, url, log } = database();
    const workers = await startWorkers(testConfig({ DATABASE_URL: url }), url, log);
    t.teardown(() => workers.stop());
    let secret = '';
    const r = await startReceiver(() => secret);
    t.teardown(() => r.close());
    const w = await makeBookingWorld(db);
    ({ secret } = await subscribe(server(), w.apiKey, r.url, ['hold_created']));

    const slot = (i: number) => ({ index: i % 8, daysAhead: 1 + Math.floor(i / 8) });
    // One at a time: every attempt after the first finds the connection idle and takes it.
    for (let i = 0; i < 6; i++) {
      await holdSlot(server(), w, slot(i));
      await waitFor(() => r.received.length === i + 1, { timeout: 10_000 });
    }
    t.is(new Set(r.received.map((x) => x.remotePort)).size, 1, 'six attempts, one connection');

    // Side by side: no more connections than attempts the worker runs at once for the origin.
    await Promise.all(Array.from({ length: 24 }, (_, i) => holdSlot(server(), w, slot(6 + i))));
    await waitFor(() => r.received.length === 30, { timeout: 15_000 });
    const connections = new Set(r.received.map((x) => x.remotePort)).size;
    t.true(connections <= PER_ORIGIN + 1, `${connections} connections for 30 attempts`);
    t.true(
      r.received.every((x) => x.rejection === undefined),
      'every delivery verified',
    );
  },
);

test.serial(
  'a socket is never shared between two names: each is resolved and checked for itself',
  async (t) => {
    const r = await startReceiver(() => '');
    t.teardown(() => r.close());
    const dns = testResolver(() => '127.0.0.1');
    const client = new WebhookClient({ timeoutMs: 5_000, allowPrivate: true, lookup: dns.lookup });
    t.teardown(() => client.close());
    for (const host of ['a', 'a', 'a', 'a', 'b', 'b', 'b', 'b'].map((name) => `${name}.example.test`)) {
      t.like(await client.post(`http://${host}:${r.port}/hooks`, {}, '{}'), { ok: true, statusCode: 200 });
    }
    // Back to back, undici may dial a second connection while the first is being freed; either way
    // each name is resolved for the sockets dialled for it, and no socket carries both names.
    const lookups = (host: string) => dns.calls.filter((c) => c.hostname === host).length;
    t.true(lookups('a.example.test') >= 1 && lookups('b.example.test') >= 1);
    t.true(dns.calls.length < 8, 'connections were reused');
    const ports = r.received.map((x) => x.remotePort);
    const [a, b] = [new Set(ports.slice(0, 4)), new Set(ports.slice(4))];
    t.false(
      [...b].some((port) => a.has(port)),
      'the second name got connections of its own',
    );
  },
);

test.serial(
  'an attempt cut off at its deadline leaves no socket behind; the next attempt to the origin is answered',
  async (t) => {
    const r = await startReceiver(() => '');
    t.teardown(() => r.close());
    const client = new WebhookClient({ timeoutMs: 300, allowPrivate: true });
    t.teardown(() => client.close());
    r.respond = () => undefined; // silent
    const started = Date.now();
    const silent = await Promise.all(Array.from({ length: 3 }, () => client.post(r.url, {}, '{}')));
    t.true(Date.now() - started < 2_000, 'each attempt ended at its own deadline');
    t.true(silent.every((o) => !o.ok && o.error === 'no answer within 300 ms'));
    r.respond = () => 204;
    t.like(await client.post(r.url, {}, '{}'), { ok: true, statusCode: 204 });
    const ports = r.received.map((x) => x.remotePort);
    t.false(ports.slice(0, 3).includes(ports[3]), 'the answered attempt came on a fresh connection');
  },
);

test.serial('an endpoint that closes idle connections quickly costs no attempt', async (t) => {
  let requests = 0;
  const endpoint = await startEndpoint((_, res) => {
    requests++;
    res.writeHead(200).end();
  });
  endpoint.server.keepAliveTimeout = 50;
  t.teardown(() => endpoint.close());
  const url = endpoint.url('/hooks');
  const client = new WebhookClient({ timeoutMs: 2_000, allowPrivate: true });
  t.teardown(() => client.close());
  for (const pause of [0, 60, 10, 120, 45, 55, 200]) {
    await new Promise((resolve) => setTimeout(resolve, pause));
    t.like(await client.post(url, { 'x-attempt': randomUUID() }, '{}'), { ok: true }, `after ${pause} ms`);
  }
  t.is(requests, 7);
});

test.serial(
  'through one shared client, a name that rebinds to 127.0.0.1 still gets no request through',
  async (t) => {
    const internal = await startReceiver(() => '');
    t.teardown(() => internal.close());
    internal.respond = () => 418;
    const strict = testConfig({ SERVICE_ENV: 'sandbox', WEBHOOK_ALLOW_PRIVATE_TARGETS: 'false' });
    const dns = testResolver(() => '127.0.0.1');
    const http = new WebhookClient({ timeoutMs: 2_000, allowPrivate: false, lookup: dns.lookup });
    t.teardown(() => http.close());
    const url = `http://rebind.example.test:${internal.port}/hooks`;
    // Subscribed while private targets were allowed, checked again only where it counts: at connect.
    const d = await deliveryFor(database(), server(), url, { config: strict, lookup: dns.lookup });
    for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
      await d.makeDue();
      const plan = await d.claim();
      await d.finish(plan!, { http });
      t.like(await d.state(), { attempts: attempt, last_status_code: null, last_error: NON_PUBLIC_TARGET });
    }
    t.is(internal.received.length, 0, 'nothing reached the local receiver');
    t.is(
      dns.calls.length,
      MAX_ATTEMPTS,
      'no refused socket was pooled: every attempt dialled and checked anew',
    );
  },
);

test.serial(
  'an attempt that has ended holds nothing of itself until its deadline would have passed',
  async (t) => {
    // The endpoint answers at once; the deadline is a minute away, so whatever an attempt left for
    // its deadline to release would still be held when the heap is measured.
    const endpoint = await startEndpoint((_req, res) => res.end('{"received":true}'));
    t.teardown(() => endpoint.close());
    const url = endpoint.url('/hooks');
    const client = new WebhookClient({ timeoutMs: 60_000, allowPrivate: true });
    t.teardown(() => client.close());
    const body = JSON.stringify({ event_type: 'hold_created', data: { hold_id: randomUUID() } });
    const attempts = async (n: number) => {
      for (let i = 0; i < n; i += 16) {
        const outcomes = await Promise.all(Array.from({ length: 16 }, () => client.post(url, {}, body)));
        t.true(outcomes.every((o) => o.ok));
      }
    };
    const heapAfterCollecting = () => {
      collectGarbage();
      collectGarbage();
      return process.memoryUsage().heapUsed;
    };
    await attempts(160); // the pool's connections, undici's lazily made parts
    const before = heapAfterCollecting();
    await attempts(1600);
    const grown = heapAfterCollecting() - before;
    // Before the deadline could be cleared, each attempt's response stayed reachable from its timer:
    // about 1,600 × 4 KiB here. What remains now is noise of the heap.
    t.true(grown < 1024 * 1024, `the heap grew by ${Math.round(grown / 1024)} KiB over 1,600 ended attempts`);
  },
);
