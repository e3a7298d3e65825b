/**
 * The host lookup both edges use (db/platform/host-resolver.ts), against DNS servers on 127.0.0.1 that the
 * test controls: one that answers, one that says NXDOMAIN, one that never answers. A hanging name
 * fails within the lookup's bound and holds no thread of libuv's pool, while a pool kept busy
 * (blocked FIFO opens, which block deterministically) stalls node:dns `lookup` itself. getaddrinfo
 * cannot be made to hang here without pointing /etc/resolv.conf at a silent server, which a test
 * must not do, so the hang is shown from the other side: getaddrinfo needs a free thread, ours not.
 * The two tests about the pool run serially, so no other test's file reads share it with them.
 */
import test from 'ava';
import { execFileSync } from 'node:child_process';
import { pbkdf2 } from 'node:crypto';
import { createSocket } from 'node:dgram';
import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import { once } from 'node:events';
import { closeSync, constants, mkdtempSync, openSync, rmSync } from 'node:fs';
import { open, readFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo, LookupFunction } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { createHostLookup } from '../../db/platform/host-resolver.ts';
import { postWebhook, UNRESOLVED_TARGET } from '../../workers/webhook-http.ts';
import { startDnsServer, type DnsAnswer, type DnsServer } from '../helpers/dns-server.ts';

/** The bound the hanging lookups get, and the slack a busy machine gets on top of it. */
const BOUND_MS = 300;
const MARGIN_MS = 1500;

/** libuv's pool size in this process (4 unless the environment says otherwise). */
const POOL_THREADS = Number(process.env.UV_THREADPOOL_SIZE) || 4;

const PARTNER_V4 = '93.184.216.34';
const PARTNER_V6 = '2606:2800:220:1::248';

/** A DNS server for this test, closed when it ends. */
async function dnsServer(
  t: { teardown(fn: () => Promise<void>): void },
  answer: (name: string) => DnsAnswer,
) {
  const server = await startDnsServer((q) => answer(q.name));
  t.teardown(() => server.close());
  return server;
}

/** One lookup as a promise of its answer (every address) or of its error; never rejects. */
function lookupAll(
  lookup: LookupFunction,
  hostname: string,
  options: LookupOptions = {},
): Promise<LookupAddress[] | NodeJS.ErrnoException> {
  return new Promise((resolve) => {
    lookup(hostname, { ...options, all: true }, (err, addresses) =>
      resolve(err ?? (addresses as LookupAddress[])),
    );
  });
}

/** A fallback the test watches: answers `address` (after `afterMs`), or never when null. */
function spyFallback(address: string | null, afterMs = 0) {
  const calls: string[] = [];
  let running = 0;
  let mostAtOnce = 0;
  const lookup: LookupFunction = (hostname, _options, callback) => {
    calls.push(hostname);
    mostAtOnce = Math.max(mostAtOnce, ++running);
    if (address === null) return;
    setTimeout(() => (running--, callback(null, [{ address, family: 4 }])), afterMs);
  };
  return { lookup, calls, mostAtOnce: () => mostAtOnce };
}

/** A port on 127.0.0.1 where nothing listens. */
async function closedUdpPort(): Promise<number> {
  const socket = createSocket('udp4').bind(0, '127.0.0.1');
  await once(socket, 'listening');
  const { port } = socket.address();
  await new Promise<void>((resolve) => socket.close(() => resolve()));
  return port;
}

const partner = (name: string): DnsAnswer =>
  name === 'partner.example'
    ? [PARTNER_V4, PARTNER_V6]
    : name === 'v4only.example'
      ? [PARTNER_V4]
      : 'nxdomain';

test('A and AAAA come from DNS, IPv4 first, in each form dns.lookup answers', async (t) => {
  const dns = await dnsServer(t, partner);
  const fallback = spyFallback('10.9.9.9');
  const lookup = createHostLookup({ servers: [dns.address], fallback: fallback.lookup });

  t.deepEqual(await lookupAll(lookup, 'partner.example'), [
    { address: PARTNER_V4, family: 4 },
    { address: PARTNER_V6, family: 6 },
  ]);
  t.deepEqual(await lookupAll(lookup, 'partner.example', { order: 'ipv6first' }), [
    { address: PARTNER_V6, family: 6 },
    { address: PARTNER_V4, family: 4 },
  ]);
  t.deepEqual(
    await lookupAll(lookup, 'v4only.example'),
    [{ address: PARTNER_V4, family: 4 }],
    'AAAA: NODATA',
  );
  const single = await new Promise((resolve) =>
    lookup('partner.example', {}, (err, address, family) => resolve({ err, address, family })),
  );
  t.deepEqual(single, { err: null, address: PARTNER_V4, family: 4 });

  const asked = dns.questions.length;
  t.deepEqual(await lookupAll(lookup, 'partner.example', { family: 6 }), [
    { address: PARTNER_V6, family: 6 },
  ]);
  t.deepEqual(dns.questions.slice(asked), [{ name: 'partner.example', type: 'AAAA' }], 'only AAAA asked');
  t.deepEqual(fallback.calls, [], 'names DNS knows never reach the fallback');
});

test('a DNS server that never answers: the lookup fails as unresolvable within its bound, no fallback', async (t) => {
  const dns = await dnsServer(t, () => 'silent');
  const fallback = spyFallback('10.9.9.9');
  const lookup = createHostLookup({ servers: [dns.address], timeoutMs: BOUND_MS, fallback: fallback.lookup });

  const started = performance.now();
  const answer = await lookupAll(lookup, 'hang.example');
  const elapsed = performance.now() - started;
  t.like(answer, { code: 'EAI_AGAIN', hostname: 'hang.example' });
  t.true(elapsed < BOUND_MS + MARGIN_MS, `${Math.round(elapsed)} ms`);
  t.deepEqual(new Set(dns.questions.map((q) => q.type)), new Set(['A', 'AAAA']), 'both families were asked');
  t.deepEqual(fallback.calls, []);
});

test('a server failure, or NXDOMAIN for one family and silence for the other, is no reason to fall back', async (t) => {
  const failing = await dnsServer(t, () => 'servfail');
  const fallback = spyFallback('10.9.9.9');
  const viaFailing = createHostLookup({ servers: [failing.address], fallback: fallback.lookup });
  t.like(await lookupAll(viaFailing, 'broken.example'), { code: 'EAI_AGAIN' });

  const half = await startDnsServer((q) => (q.type === 'A' ? 'nxdomain' : 'silent'));
  t.teardown(() => half.close());
  const viaHalf = createHostLookup({
    servers: [half.address],
    timeoutMs: BOUND_MS,
    fallback: fallback.lookup,
  });
  t.like(await lookupAll(viaHalf, 'half.example'), { code: 'EAI_AGAIN' });
  t.deepEqual(fallback.calls, []);
});

test.serial('ten hanging lookups hold no thread: file reads and pbkdf2 finish while they wait', async (t) => {
  const dns = await dnsServer(t, () => 'silent');
  const lookup = createHostLookup({ servers: [dns.address], timeoutMs: 1500 });
  let settled = 0;
  const hanging = Array.from({ length: 10 }, (_, i) =>
    lookupAll(lookup, `hang-${i}.example`).then((answer) => (settled++, answer)),
  );

  // More thread-pool work than the pool has threads, so any thread held by a lookup would show.
  await Promise.all([
    ...Array.from({ length: POOL_THREADS * 2 }, () => readFile(import.meta.filename)),
    ...Array.from({ length: POOL_THREADS * 2 }, () => promisify(pbkdf2)('secret', 'salt', 1, 32, 'sha256')),
  ]);
  t.is(settled, 0, 'the pool work was done while every lookup was still waiting for DNS');
  for (const answer of await Promise.all(hanging)) t.like(answer, { code: 'EAI_AGAIN' });
});

test.serial(
  'a saturated thread pool stalls node:dns lookup, even of localhost, but not lookups through DNS here',
  async (t) => {
    const dns = await dnsServer(t, partner);
    const lookup = createHostLookup({ servers: [dns.address] });
    const dir = mkdtempSync(join(tmpdir(), 'pool-'));
    const fifos = Array.from({ length: POOL_THREADS }, (_, i) => join(dir, `fifo-${i}`));
    for (const fifo of fifos) execFileSync('mkfifo', [fifo]);
    // Opening a FIFO for reading blocks its pool thread until a writer opens it.
    const readers = fifos.map((fifo) => open(fifo, 'r'));
    let released: Promise<void> | undefined;
    const release = () =>
      (released ??= (async () => {
        // O_RDWR never blocks on a FIFO and counts as the writer every reader waits for.
        const writers = fifos.map((fifo) => openSync(fifo, constants.O_RDWR));
        for (const reader of await Promise.all(readers)) await reader.close();
        for (const fd of writers) closeSync(fd);
        rmSync(dir, { recursive: true, force: true });
      })());
    t.teardown(release);

    let nodeAnswered = false;
    const viaGetaddrinfo = promisify(dnsLookup)('localhost').then(
      (answer) => ((nodeAnswered = true), answer),
    );
    t.deepEqual(await lookupAll(lookup, 'partner.example', { family: 4 }), [
      { address: PARTNER_V4, family: 4 },
    ]);
    t.false(nodeAnswered, 'getaddrinfo is still queued behind the blocked threads');

    await release();
    t.like(await viaGetaddrinfo, { address: '127.0.0.1' }, 'and answers once a thread is free');
  },
);

test('names DNS does not know go to the hosts file; localhost never asks DNS', async (t) => {
  const dns = await dnsServer(t, (name) => (name === 'nodata.example' ? [] : 'nxdomain'));
  const viaHosts = createHostLookup({ servers: [dns.address] });
  const single = await new Promise((resolve) =>
    viaHosts('localhost', {}, (err, address, family) => resolve({ err, address, family })),
  );
  t.deepEqual(single, { err: null, address: '127.0.0.1', family: 4 }, 'from /etc/hosts');
  t.deepEqual(dns.questions, [], 'localhost is not a DNS question');

  const fallback = spyFallback('10.1.2.3');
  const lookup = createHostLookup({ servers: [dns.address], fallback: fallback.lookup });
  t.deepEqual(
    await lookupAll(lookup, 'in-hosts-only.test'),
    [{ address: '10.1.2.3', family: 4 }],
    'NXDOMAIN',
  );
  t.deepEqual(await lookupAll(lookup, 'nodata.example'), [{ address: '10.1.2.3', family: 4 }], 'NODATA');
  const offline = createHostLookup({
    servers: [`127.0.0.1:${await closedUdpPort()}`],
    fallback: fallback.lookup,
  });
  t.deepEqual(
    await lookupAll(offline, 'offline.test'),
    [{ address: '10.1.2.3', family: 4 }],
    'no DNS server',
  );
  t.deepEqual(fallback.calls, ['in-hosts-only.test', 'nodata.example', 'offline.test']);
});

test('at most two fallbacks run at once; a lookup waiting for one fails at its deadline', async (t) => {
  const dns = await dnsServer(t, () => 'nxdomain');
  const slow = spyFallback('10.1.2.3', 20);
  const queued = createHostLookup({ servers: [dns.address], fallback: slow.lookup });
  const answers = await Promise.all(Array.from({ length: 6 }, (_, i) => lookupAll(queued, `q${i}.test`)));
  for (const answer of answers) t.deepEqual(answer, [{ address: '10.1.2.3', family: 4 }]);
  t.is(slow.mostAtOnce(), 2, 'six fallbacks, never more than two at once');

  const stuck = spyFallback(null);
  const starved = createHostLookup({ servers: [dns.address], timeoutMs: BOUND_MS, fallback: stuck.lookup });
  const started = performance.now();
  const stuckAnswers = await Promise.all(
    Array.from({ length: 5 }, (_, i) => lookupAll(starved, `s${i}.test`)),
  );
  const elapsed = performance.now() - started;
  for (const answer of stuckAnswers) t.like(answer, { code: 'EAI_AGAIN' });
  t.true(elapsed < BOUND_MS + MARGIN_MS, `${Math.round(elapsed)} ms`);
  t.is(stuck.calls.length, 2, 'two hanging fallbacks held their slots; the rest never started one');
});

test('a webhook attempt dials the address DNS gave, and a silent name fails it as unresolved', async (t) => {
  const dns: DnsServer = await dnsServer(t, (name) =>
    name === 'hooks.example.test' ? ['127.0.0.1'] : 'silent',
  );
  const receiver = createServer((_, res) => res.writeHead(204).end()).listen(0, '127.0.0.1');
  await once(receiver, 'listening');
  t.teardown(() => new Promise<void>((resolve) => receiver.close(() => resolve())));
  const { port } = receiver.address() as AddressInfo;
  const lookup = createHostLookup({ servers: [dns.address], timeoutMs: BOUND_MS });
  const post = (host: string) =>
    postWebhook(`http://${host}:${port}/hooks`, {}, '{}', { timeoutMs: 10_000, allowPrivate: true, lookup });

  t.deepEqual(await post('hooks.example.test'), { ok: true, statusCode: 204, error: null });
  const started = performance.now();
  t.deepEqual(await post('hang.example.test'), { ok: false, statusCode: null, error: UNRESOLVED_TARGET });
  t.true(performance.now() - started < BOUND_MS + MARGIN_MS, 'the lookup bound, not the 10 s request bound');
});
