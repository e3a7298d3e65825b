/**
 * Series against single holds, through HTTP against `npm run web`, at 4 clients: single holds (hold
 * only), then series of 26 weekly occurrences (each on its own court and start time, never
 * contended), then previews of such series. What a series costs the server (the web process and
 * PostgreSQL, in CPU) against six single holds, and the preview's latencies.
 */
import { randomUUID } from 'node:crypto';
import type { Knex } from '../../db/postgres/knex.ts';
import * as venues from '../../db/queries/venues.ts';
import {
  benchPartners,
  benchVenue,
  msSince,
  percentile,
  serverCpuSeconds,
  slotSupply,
  startWebProcess,
} from './harness.ts';

const CLIENTS = 4;
const OCCURRENCES = 26;

/** Returns the markdown table of the series benchmark. */
export async function benchSeries(url: string, db: Knex, seconds: number): Promise<string> {
  const venueId = await benchVenue(db, 'Bench Series Arena');
  await venues.setSeriesWindow(db, venueId, 730);
  const clients = await benchPartners(db, venueId, CLIENTS);
  const takeSlot = await slotSupply(db, venueId);
  const courts = await db('resources').where({ venue_id: venueId }).orderBy('id').pluck('id');
  const { rows } = await db.raw<{ rows: { d: string }[] }>(
    "select to_char((now() at time zone timezone)::date + 3, 'YYYY-MM-DD') as d from venues where id = ?",
    [venueId],
  );
  const firstDate = rows[0]!.d;
  // Each series its own court and start time (06:00 to 20:00), from three days ahead (the single
  // holds take tomorrow's slots first): never a contended window. Previews judge patterns at 21:00,
  // which nothing holds.
  const patternAt = (court: string, hour: number) => ({
    venue_id: venueId,
    resource_id: court,
    first_date: firstDate,
    start_time: `${String(hour).padStart(2, '0')}:00`,
    slot_duration_minutes: 60,
    count: OCCURRENCES,
  });
  let nextSeries = 0;
  const seriesPattern = () => {
    const n = nextSeries++;
    const hour = 6 + Math.floor(n / courts.length);
    if (hour > 20) throw new Error('out of series patterns: lower BENCH_SECONDS');
    return patternAt(courts[n % courts.length], hour);
  };
  let nextPreview = 0;
  const previewPattern = () => patternAt(courts[nextPreview++ % courts.length], 21);
  const web = await startWebProcess(url);
  const post = async (path: string, key: string, body: unknown, status: number) => {
    const res = await fetch(`${web.base}/api/v1${path}`, {
      method: 'POST',
      headers: { 'x-api-key': key, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    const json = (await res.json()) as Record<string, unknown>;
    if (res.status !== status) throw new Error(`${res.status} ${String(json.error)}`);
    return json;
  };
  const runs: [string, (key: string) => Promise<unknown>][] = [
    [
      'single hold',
      (key) => {
        const slot = takeSlot();
        return post(
          '/bookings/hold',
          key,
          {
            venue_id: venueId,
            resource_id: slot.resource_id,
            slot_start: slot.slot_start.toISOString(),
            slot_duration_minutes: 60,
            idempotency_key: randomUUID(),
          },
          201,
        );
      },
    ],
    [
      `series of ${OCCURRENCES}`,
      (key) => post('/bookings/series', key, { ...seriesPattern(), idempotency_key: randomUUID() }, 201),
    ],
    [`preview of ${OCCURRENCES}`, (key) => post('/bookings/series/preview', key, previewPattern(), 200)],
  ];
  const rowsOut = [
    '| request | requests/s | p50 ms | p99 ms | server CPU ms per request (web + PostgreSQL) | errors |',
    '|---|---:|---:|---:|---:|---:|',
  ];
  const cpu: number[] = [];
  let previewP99 = NaN;
  try {
    for (const [name, request] of runs) {
      await drive(request, clients, 1); // warm-up
      const before = await serverCpuSeconds(web.pid);
      const result = await drive(request, clients, seconds);
      const after = await serverCpuSeconds(web.pid);
      const webMs = ((after.web - before.web) * 1000) / result.count;
      const pgMs = ((after.postgres - before.postgres) * 1000) / result.count;
      cpu.push(webMs + pgMs);
      if (name.startsWith('preview')) previewP99 = percentile(result.latency, 99);
      rowsOut.push(
        `| ${name} | ${result.rate.toFixed(1)} | ${percentile(result.latency, 50)} | ${percentile(result.latency, 99)} | ` +
          `${(webMs + pgMs).toFixed(2)} (${webMs.toFixed(2)} + ${pgMs.toFixed(2)}) | ${result.errors} |`,
      );
    }
  } finally {
    await web.stop();
  }
  return (
    `${seconds} s per row, ${CLIENTS} clients, windows never contended\n\n${rowsOut.join('\n')}\n\n` +
    `A series of ${OCCURRENCES} costs ${(cpu[1]! / cpu[0]!).toFixed(2)} single holds of server CPU ` +
    `(${((cpu[1]! / (6 * cpu[0]!)) * 100).toFixed(0)}% of six); its preview answers in ${previewP99} ms at p99.`
  );
}

async function drive(
  request: (key: string) => Promise<unknown>,
  clients: { apiKey: string }[],
  seconds: number,
): Promise<{ rate: number; count: number; latency: number[]; errors: number }> {
  const latency: number[] = [];
  let errors = 0;
  const started = process.hrtime.bigint();
  const deadline = Date.now() + seconds * 1000;
  await Promise.all(
    clients.map(async (client) => {
      while (Date.now() < deadline) {
        const t = process.hrtime.bigint();
        try {
          await request(client.apiKey);
          latency.push(msSince(t));
        } catch {
          errors++;
        }
      }
    }),
  );
  return { rate: latency.length / (msSince(started) / 1000), count: latency.length, latency, errors };
}
