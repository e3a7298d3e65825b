/**
 * What the availability streams cost (GET /slots/availability/stream), measured from outside:
 * BENCH_STREAMS streams (default 1,000; five per partner) on one venue of `npm run web`.
 *
 * 1. Hold → confirm cycles at 16 clients for the run's seconds, before any stream opens.
 * 2. The streams open (50 at a time, each until its `hello`); with them idle, the web process's
 *    memory and the database's backends, against before.
 * 3. Holds paced at 20/s from another partner: every stream × hold event (matched by `slot_id`),
 *    commit → event (the hold's 201 to the event's arrival; one that beats the 201 counts 0), and
 *    the web's CPU per event delivered.
 * 4. The same cycles again with the streams open: cycles/s against step 1, and the server's CPU
 *    (web and PostgreSQL) beyond what step 1's cycles cost, per stream event.
 *
 * The streams are read here, on the same cores, by a reader that only counts events (and, in step
 * 3, finds `slot_id`s): its own CPU per event is reported apart, as what a reader costs.
 */
import { request, type ClientRequest } from 'node:http';
import { readFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Knex } from '../../db/postgres/knex.ts';
import {
  apiClient,
  benchPartners,
  benchVenue,
  confirmBody,
  holdBody,
  msSince,
  percentile,
  serverCpuSeconds,
  slotSupply,
  startWebProcess,
  type Slot,
} from './harness.ts';

const STREAMS = Number(process.env.BENCH_STREAMS ?? 1000);
const PER_PARTNER = 5;
const OPEN_AT_ONCE = 50;
const HOLDS_PER_SECOND = 20;
const CLIENTS = 16;

const SLOT_EVENT = Buffer.from('\nevent: slot\n');
const SLOT_ID = /"slot_id":"([0-9a-f-]{36})"/g;

/** Returns the markdown of the stream benchmark. */
export async function benchStream(url: string, db: Knex, seconds: number): Promise<string> {
  const venueId = await benchVenue(db, 'Stream Arena');
  const partnerCount = Math.ceil(STREAMS / PER_PARTNER);
  const [writer, ...readers] = await benchPartners(db, venueId, partnerCount + 1);
  const takeSlot = await slotSupply(db, venueId);
  const web = await startWebProcess(url);
  const api = apiClient(web.base, writer!.apiKey, CLIENTS);
  const post = api.post;
  const progress = (what: string) => process.stderr.write(`stream: ${what}\n`);
  const streams: Stream[] = [];
  try {
    await cycles(post, venueId, takeSlot, 2); // warm-up: plans, JIT, pools
    progress('cycles without streams');
    const alone = await measured(web.pid, () => cycles(post, venueId, takeSlot, seconds));

    progress(`opening ${STREAMS} streams`);
    const idleBefore = { rssKiB: await rssKiB(web.pid), backends: await backends(db) };
    const opened = performance.now();
    let next = 0;
    await Promise.all(
      Array.from({ length: Math.min(OPEN_AT_ONCE, STREAMS) }, async () => {
        while (next < STREAMS) {
          const i = next++;
          const stream = new Stream(web.base, venueId, readers[Math.floor(i / PER_PARTNER)]!.apiKey);
          streams.push(stream);
          await stream.opened;
        }
      }),
    );
    const openSeconds = (performance.now() - opened) / 1000;
    await sleep(2_000); // the opening burst's pool connections and garbage settle
    const idleAfter = { rssKiB: await rssKiB(web.pid), backends: await backends(db) };

    progress(`holds at ${HOLDS_PER_SECOND}/s`);
    for (const stream of streams) stream.matching = new Map();
    const held = new Map<string, number>(); // slot_id → when its 201 arrived (performance.now())
    const holds = await measured(web.pid, async () => {
      const started = performance.now();
      const total = seconds * HOLDS_PER_SECOND;
      await Promise.all(
        Array.from({ length: total }, async (_, i) => {
          await sleep(started + (i * 1000) / HOLDS_PER_SECOND - performance.now());
          const hold = await post('/bookings/hold', holdBody(venueId, takeSlot()));
          held.set(hold.slot_id!, performance.now());
        }),
      );
      // Until every stream has every hold's event (or 10 s without progress).
      let last = -1;
      let lastAt = performance.now();
      for (;;) {
        const received = streams.reduce(
          (n, s) => n + [...held.keys()].filter((id) => s.matching!.has(id)).length,
          0,
        );
        if (received === held.size * streams.length) break;
        if (received !== last) [last, lastAt] = [received, performance.now()];
        else if (performance.now() - lastAt > 10_000) break;
        await sleep(100);
      }
      return held.size;
    });
    const latencies: number[] = [];
    for (const stream of streams) {
      for (const [slotId, committed] of held) {
        const arrived = stream.matching!.get(slotId);
        if (arrived !== undefined) latencies.push(Math.max(0, arrived - committed));
      }
      stream.matching = undefined;
    }

    progress('cycles with the streams open');
    const countedBefore = streams.reduce((n, s) => n + s.events, 0);
    const beside = await measured(web.pid, () => cycles(post, venueId, takeSlot, seconds));
    const events = streams.reduce((n, s) => n + s.events, 0) - countedBefore;
    const ended = streams.filter((s) => s.ended).length;

    const perCycle = (m: Measured) => ({
      web: m.web / m.result.cycles,
      postgres: m.postgres / m.result.cycles,
      reader: m.reader / m.result.cycles,
    });
    const a = perCycle(alone);
    const extra = {
      web: beside.web - a.web * beside.result.cycles,
      postgres: beside.postgres - a.postgres * beside.result.cycles,
      reader: beside.reader - a.reader * beside.result.cycles,
    };
    const us = (s: number, n: number) => ((s * 1e6) / n).toFixed(2);
    const expected = held.size * streams.length;
    return [
      `${STREAMS} streams (${partnerCount} partners) on one venue of 300 courts; ${CLIENTS} clients; ${seconds}-s windows; ` +
        'the streams are read in this process, which counts events only',
      '',
      '| figure | value |',
      '|---|---:|',
      `| streams opened | ${streams.filter((s) => s.helloAt !== undefined).length} of ${STREAMS} in ${openSeconds.toFixed(1)} s |`,
      `| web memory per open stream | ${((idleAfter.rssKiB - idleBefore.rssKiB) / STREAMS).toFixed(1)} KiB |`,
      `| database backends, before → with the streams idle | ${idleBefore.backends} → ${idleAfter.backends} |`,
      `| holds at ${HOLDS_PER_SECOND}/s: events received | ${latencies.length} of ${expected} |`,
      `| commit → event p50 / p99 | ${percentile(latencies, 50)} / ${percentile(latencies, 99)} ms |`,
      `| web CPU per event delivered (holds at ${HOLDS_PER_SECOND}/s) | ${us(holds.web, Math.max(1, latencies.length))} µs |`,
      `| PostgreSQL CPU per hold (the hold, the change and the streams' reads of it) | ${((holds.postgres * 1000) / Math.max(1, holds.result)).toFixed(2)} ms |`,
      `| cycles/s without streams → with them | ${alone.result.rate.toFixed(1)} → ${beside.result.rate.toFixed(1)} (${(beside.result.rate / alone.result.rate).toFixed(2)}) |`,
      `| stream events read beside the cycles | ${events} (${(events / beside.result.cycles).toFixed(0)} a cycle) |`,
      `| server CPU per stream event beside the cycles: web / PostgreSQL | ${us(extra.web, events)} / ${us(extra.postgres, events)} µs |`,
      `| this process's CPU per stream event (the reader) | ${us(extra.reader, events)} µs |`,
      `| server CPU ms per cycle without streams: web / PostgreSQL | ${(a.web * 1000).toFixed(2)} / ${(a.postgres * 1000).toFixed(2)} |`,
      `| streams ended by the service | ${ended} |`,
    ].join('\n');
  } finally {
    for (const stream of streams) stream.close();
    await api.close();
    await web.stop();
  }
}

/** One stream, read as bytes: `event: slot` counted, and in step 3 each `slot_id`'s first arrival. */
class Stream {
  readonly opened: Promise<void>;
  helloAt: number | undefined;
  events = 0;
  ended = false;
  /** slot_id → first arrival, while the holds run. */
  matching: Map<string, number> | undefined;
  private readonly req: ClientRequest;
  private tail: Buffer = Buffer.alloc(0);

  constructor(base: string, venueId: string, apiKey: string) {
    const { hostname, port } = new URL(base);
    this.req = request({
      host: hostname,
      port,
      path: `/api/v1/slots/availability/stream?venue_id=${venueId}`,
      headers: { 'x-api-key': apiKey, accept: 'text/event-stream' },
      agent: false,
    });
    this.opened = new Promise((resolve, reject) => {
      this.req.on('response', (res) => {
        if (res.statusCode !== 200) {
          reject(new Error(`a stream answered ${res.statusCode}`));
          return;
        }
        res.on('data', (chunk: Buffer) => {
          if (this.helloAt === undefined && chunk.includes('event: hello')) {
            this.helloAt = performance.now();
            resolve();
          }
          this.read(chunk);
        });
        res.on('end', () => (this.ended = true));
      });
      this.req.on('error', reject);
    });
    this.opened.catch(() => {});
    this.req.end();
  }

  private read(chunk: Buffer): void {
    if (this.matching) {
      // Whole lines only: a data line cut by the chunk is read with the next one.
      const text = this.tail.length ? Buffer.concat([this.tail, chunk]) : chunk;
      const end = text.lastIndexOf(10) + 1;
      this.events += occurrences(text.subarray(0, end));
      const now = performance.now();
      for (const [, slotId] of text.toString('latin1', 0, end).matchAll(SLOT_ID)) {
        if (!this.matching.has(slotId!)) this.matching.set(slotId!, now);
      }
      this.tail = Buffer.from(text.subarray(end));
      return;
    }
    // Counting only, without copying the chunk: an event that straddles the last chunk and this one
    // lies in the seam of the last chunk's final bytes and this one's first (the pattern is longer
    // than either part, so the seam holds at most one, and none that lies wholly on one side).
    if (this.tail.length) {
      this.events += occurrences(Buffer.concat([this.tail, chunk.subarray(0, SLOT_EVENT.length - 1)]));
    }
    this.events += occurrences(chunk);
    this.tail = Buffer.from(chunk.subarray(Math.max(0, chunk.length - (SLOT_EVENT.length - 1))));
  }

  close(): void {
    this.req.destroy();
  }
}

interface Measured<T = CycleRun> {
  result: T;
  /** CPU seconds over the run: the web process, every PostgreSQL process, and this one. */
  web: number;
  postgres: number;
  reader: number;
}

async function measured<T>(webPid: number, run: () => Promise<T>): Promise<Measured<T>> {
  const before = await serverCpuSeconds(webPid);
  const self = process.cpuUsage();
  const result = await run();
  const after = await serverCpuSeconds(webPid);
  const used = process.cpuUsage(self);
  return {
    result,
    web: after.web - before.web,
    postgres: after.postgres - before.postgres,
    reader: (used.user + used.system) / 1e6,
  };
}

interface CycleRun {
  cycles: number;
  rate: number;
}

/** Hold → confirm back to back on CLIENTS connections for `seconds`. */
async function cycles(
  post: (route: string, body: unknown) => Promise<Record<string, string>>,
  venueId: string,
  takeSlot: () => Slot,
  seconds: number,
): Promise<CycleRun> {
  const started = process.hrtime.bigint();
  let done = 0;
  await Promise.all(
    Array.from({ length: CLIENTS }, async () => {
      while (msSince(started) < seconds * 1000) {
        const hold = await post('/bookings/hold', holdBody(venueId, takeSlot()));
        await post('/bookings/confirm', confirmBody(hold.hold_id!));
        done++;
      }
    }),
  );
  return { cycles: done, rate: done / (msSince(started) / 1000) };
}

/** How many times `\nevent: slot\n` occurs in `bytes`. */
function occurrences(bytes: Buffer): number {
  let n = 0;
  for (let i = bytes.indexOf(SLOT_EVENT); i !== -1; i = bytes.indexOf(SLOT_EVENT, i + SLOT_EVENT.length)) n++;
  return n;
}

async function rssKiB(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => '');
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? NaN);
}

async function backends(db: Knex): Promise<number> {
  const { rows } = await db.raw<{ rows: { n: number }[] }>(
    'select count(*)::int as n from pg_stat_activity where datname = current_database()',
  );
  return rows[0]!.n;
}
