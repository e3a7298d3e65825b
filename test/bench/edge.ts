/**
 * The HTTP edge's cost: hold → confirm cycles paced at a fixed rate (so that every variant sees
 * the same load, and the same batching of its key's statements) by 16 keep-alive connections of one
 * partner key, as the shared load harness drives them, against `npm run web` logging at `info` to
 * a file. Reports the web process's CPU per request, user and kernel apart, and PostgreSQL's per
 * cycle: what the edge costs beyond the statements it sends. Then the same for the floor
 * (edge-floor-app.ts: Koa, the router, zod and the same statements, nothing of the edge), on the
 * same database a moment later: the difference is what the edge itself costs. Then for the
 * platform's floor (the same app on node:http alone, no Koa, no router, no zod): what Node and
 * the database driver cost for the cycle on this machine, below which no edge can go.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
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
  processCpuSplit,
  serverCpuSeconds,
  slotSupply,
  startWebProcess,
  type Slot,
} from './harness.ts';

const CLIENTS = 16;
/** Cycles per second offered: well below saturation on two cores, so the edge is not queued. */
const RATE = Number(process.env.BENCH_EDGE_RATE ?? 150);

/** Returns the markdown table of the edge benchmark. */
export async function benchEdge(url: string, db: Knex, seconds: number): Promise<string> {
  const venueId = await benchVenue(db, 'Edge Arena');
  const [client] = await benchPartners(db, venueId, 1);
  const takeSlot = await slotSupply(db, venueId);
  const rows = [];
  for (const which of ['web', 'floor', 'bare'] as const) {
    rows.push(await measure(url, seconds, { process: which, venueId, apiKey: client!.apiKey, takeSlot }));
  }
  const [web, floor, bare] = rows as [Measured, Measured, Measured];
  return [
    `${RATE} cycles/s offered for ${seconds} s by ${CLIENTS} keep-alive connections of one key; web logs at info to a file; ` +
      'the floor is Koa, @koa/router, zod and the same statements without the edge, bare the same on node:http alone (test/bench/edge-floor-app.ts)',
    '',
    '| process | cycles/s | cycle p50 ms | cycle p99 ms | errors | web CPU µs/request | user | kernel | PostgreSQL CPU ms/cycle |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...rows.map((row) => row.line),
    '',
    `The edge costs ${web.usPerRequest - floor.usPerRequest} µs of CPU a request above the floor ` +
      `(${(web.usPerRequest / floor.usPerRequest).toFixed(2)} × the floor's); Koa, the router and zod ` +
      `${floor.usPerRequest - bare.usPerRequest} µs above node:http alone, which costs ${bare.usPerRequest} µs.`,
  ].join('\n');
}

interface Measured {
  line: string;
  usPerRequest: number;
}

/** Paced cycles against `npm run web` or the floor app, and what the process spent on them. */
async function measure(
  url: string,
  seconds: number,
  target: { process: 'web' | 'floor' | 'bare'; venueId: string; apiKey: string; takeSlot: () => Slot },
): Promise<Measured> {
  const logDir = await mkdtemp(path.join(tmpdir(), 'bench-edge-'));
  const web = await startWebProcess(url, {
    logLevel: process.env.BENCH_EDGE_LOG_LEVEL ?? 'info',
    logFile: path.join(logDir, 'web.log'),
    ...(target.process !== 'web' && { entry: path.join(import.meta.dirname, 'edge-floor-app.ts') }),
    ...(target.process === 'bare' && { env: { EDGE_FLOOR: 'bare' } }),
  });
  const api = apiClient(web.base, target.apiKey, CLIENTS);
  const cycle = async (slot: Slot) => {
    const held = await api.post('/bookings/hold', holdBody(target.venueId, slot));
    await api.post('/bookings/confirm', confirmBody(held.hold_id!));
  };
  try {
    await paced(cycle, target.takeSlot, 2, RATE); // warm-up: prepared statements, JIT, pool
    const cpuBefore = await processCpuSplit(web.pid);
    const serverBefore = await serverCpuSeconds(web.pid);
    const run = await paced(cycle, target.takeSlot, seconds, RATE);
    const cpuAfter = await processCpuSplit(web.pid);
    const serverAfter = await serverCpuSeconds(web.pid);
    const requests = run.cycles * 2;
    const us = (s: number) => Math.round((s * 1e6) / requests);
    const user = cpuAfter.user - cpuBefore.user;
    const system = cpuAfter.system - cpuBefore.system;
    const pgMs = ((serverAfter.postgres - serverBefore.postgres) * 1000) / run.cycles;
    return {
      usPerRequest: us(user + system),
      line:
        `| ${target.process} | ${run.rate.toFixed(1)} | ${percentile(run.latencies, 50)} | ${percentile(run.latencies, 99)} | ` +
        `${run.errors} | ${us(user + system)} | ${us(user)} | ${us(system)} | ${pgMs.toFixed(2)} |`,
    };
  } finally {
    await api.close();
    await web.stop();
    await rm(logDir, { recursive: true, force: true });
  }
}

/** Starts `rate` cycles a second (at most CLIENTS at once) for `seconds`. */
async function paced(
  cycle: (slot: Slot) => Promise<void>,
  takeSlot: () => Slot,
  seconds: number,
  rate: number,
): Promise<{ rate: number; cycles: number; latencies: number[]; errors: number }> {
  const latencies: number[] = [];
  let errors = 0;
  let running = 0;
  const inFlight = new Set<Promise<void>>();
  const started = process.hrtime.bigint();
  const total = Math.round(seconds * rate);
  for (let i = 0; i < total; i++) {
    const due = (i / rate) * 1000 - msSince(started);
    if (due > 0) await sleep(due);
    while (running >= CLIENTS) await Promise.race(inFlight);
    running++;
    const t = process.hrtime.bigint();
    const run: Promise<void> = cycle(takeSlot()).then(
      () => void latencies.push(msSince(t)),
      () => void errors++,
    );
    const tracked = run.finally(() => {
      running--;
      inFlight.delete(tracked);
    });
    inFlight.add(tracked);
  }
  await Promise.all(inFlight);
  return { rate: latencies.length / (msSince(started) / 1000), cycles: latencies.length, latencies, errors };
}
