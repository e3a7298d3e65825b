/**
 * Webhook delivery, measured from outside: `npm run web` and `npm run worker` processes, a local
 * receiver in this process.
 * - latency: holds at a steady rate; from each hold's 201 (its commit) to the receiver's 2xx;
 * - throughput: events recorded and published in bulk while no worker runs, their deliveries then
 *   drained by one, then two worker processes, beside a plain loop of signed POSTs to the same
 *   receiver as the ceiling;
 * - expiry: how long after hold_expiry_at hold_expired is recorded.
 */
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import type { Knex } from '../../db/postgres/knex.ts';
import { signWebhook } from '../../db/rules/webhook-signature.ts';
import {
  benchPartners,
  benchVenue,
  msSince,
  percentile,
  startWebProcess,
  startWorker,
  stopProcess,
} from './harness.ts';

const RATE_PER_SECOND = 100;
const BULK_EVENTS = 2000;

/** Returns the markdown of the webhook benchmark. */
export async function benchWebhooks(url: string, db: Knex, seconds: number): Promise<string> {
  const venueId = await benchVenue(db, 'Webhook Arena');
  const [client] = await benchPartners(db, venueId, 1);
  const receiver = await startReceiver();
  const web = await startWebProcess(url);
  const subscribed = await fetch(`${web.base}/api/v1/partner/webhooks`, {
    method: 'POST',
    headers: { 'x-api-key': client!.apiKey, 'content-type': 'application/json' },
    body: JSON.stringify({ endpoint_url: receiver.url, event_types: ['hold_created', 'hold_expired'] }),
  });
  if (subscribed.status !== 201) throw new Error(`subscribe answered ${subscribed.status}`);
  const sections: string[] = [];
  const progress = (what: string) => process.stderr.write(`webhooks: ${what}\n`);
  try {
    progress('latency');
    let worker = await startWorker(url);
    try {
      sections.push(await latency(db, web.base, client!.apiKey, venueId, receiver, seconds));
    } finally {
      await stopProcess(worker);
    }
    const rows = ['| sender | deliveries/s | ratio to the plain loop |', '|---|---:|---:|'];
    progress('throughput');
    const ceiling = await plainLoop(receiver.url, BULK_EVENTS);
    for (const count of [1, 2]) {
      const rate = await drain(db, url, venueId, client!.partnerId, receiver, count);
      rows.push(
        `| ${count} worker process${count > 1 ? 'es' : ''} (fan-out + delivery) | ${Math.round(rate)} | ${(rate / ceiling).toFixed(2)} |`,
      );
    }
    rows.push(`| plain loop of signed POSTs, 16 in flight | ${Math.round(ceiling)} | 1.00 |`);
    sections.push(
      `Throughput, ${BULK_EVENTS} events recorded at once, drained end to end:\n\n${rows.join('\n')}`,
    );
    progress('expiry');
    worker = await startWorker(url);
    try {
      sections.push(await expiryLag(db, web.base, client!.apiKey));
    } finally {
      await stopProcess(worker);
    }
  } finally {
    await web.stop();
    await receiver.close();
  }
  return sections.join('\n\n');
}

/** Never-contended slots of a venue, tomorrow onwards. */
async function slotsOf(db: Knex, venueId: string): Promise<{ resource_id: string; slot_start: string }[]> {
  const { rows } = await db.raw<{ rows: { resource_id: string; slot_start: string }[] }>(
    `select s.resource_id, s.slot_start from venues v, generate_series(1, 20) d,
       lateral venue_slots(v.id, (now() at time zone v.timezone)::date + d) s
     where v.id = ? order by d, s.slot_start, s.resource_id`,
    [venueId],
  );
  return rows;
}

async function latency(
  db: Knex,
  base: string,
  apiKey: string,
  venueId: string,
  receiver: Receiver,
  seconds: number,
): Promise<string> {
  const slots = await slotsOf(db, venueId);
  const committed = new Map<string, number>();
  const pending: Promise<void>[] = [];
  const started = Date.now();
  for (let i = 0; Date.now() - started < seconds * 1000; i++) {
    const due = started + (i * 1000) / RATE_PER_SECOND;
    if (due > Date.now()) await new Promise((resolve) => setTimeout(resolve, due - Date.now()));
    const slot = slots[i]!;
    pending.push(
      fetch(`${base}/api/v1/bookings/hold`, {
        method: 'POST',
        headers: { 'x-api-key': apiKey, 'content-type': 'application/json' },
        body: JSON.stringify({
          venue_id: venueId,
          resource_id: slot.resource_id,
          slot_start: new Date(slot.slot_start).toISOString(),
          slot_duration_minutes: 60,
          idempotency_key: randomUUID(),
        }),
      }).then(async (res) => {
        const body = (await res.json()) as { hold_id?: string };
        if (res.status === 201) committed.set(body.hold_id!, performance.now());
      }),
    );
  }
  await Promise.all(pending);
  const rate = committed.size / ((Date.now() - started) / 1000);
  const deadline = Date.now() + 30_000;
  while ([...committed.keys()].some((id) => !receiver.arrivals.has(id)) && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const delays = [...committed].map(([id, at]) => Math.max(0, (receiver.arrivals.get(id) ?? Infinity) - at));
  const lost = delays.filter((d) => d === Infinity).length;
  return (
    `Commit to 2xx, holds at a steady ${RATE_PER_SECOND}/s for ${seconds} s (${Math.round(rate)}/s reached), one worker:\n\n` +
    '| events | p50 ms | p99 ms | max ms | not delivered in 30 s |\n|---:|---:|---:|---:|---:|\n' +
    `| ${delays.length} | ${percentile(delays, 50)} | ${percentile(delays, 99)} | ${percentile(delays, 100)} | ${lost} |`
  );
}

/** Records BULK_EVENTS events with their deliveries, then times `workers` processes draining them. */
async function drain(
  db: Knex,
  url: string,
  venueId: string,
  partnerId: string,
  receiver: Receiver,
  workers: number,
) {
  const before = receiver.count;
  await db.raw(
    `select record_event('hold_created', ?, ?, null, null, gen_random_uuid(), '{}'::jsonb, null)
       from generate_series(1, ?)`,
    [venueId, partnerId, BULK_EVENTS],
  );
  const started = process.hrtime.bigint();
  const processes = await Promise.all(Array.from({ length: workers }, () => startWorker(url)));
  let lastReport = Date.now();
  while (receiver.count - before < BULK_EVENTS) {
    await new Promise((resolve) => setTimeout(resolve, 20));
    if (Date.now() - lastReport > 2000) {
      lastReport = Date.now();
      process.stderr.write(`webhooks: ${receiver.count - before} of ${BULK_EVENTS} delivered\n`);
    }
  }
  const rate = BULK_EVENTS / (msSince(started) / 1000);
  await Promise.all(processes.map(stopProcess));
  return rate;
}

/** The ceiling: signed POSTs of a delivery-sized body, 16 in flight, straight to the receiver. */
async function plainLoop(target: string, count: number): Promise<number> {
  const body = JSON.stringify({
    event_id: randomUUID(),
    event_type: 'hold_created',
    details: { resource_id: randomUUID() },
  });
  let sent = 0;
  const started = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      while (sent < count) {
        sent++;
        const timestamp = Math.floor(Date.now() / 1000);
        const res = await fetch(target, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            'x-service-timestamp': String(timestamp),
            'x-service-signature': signWebhook('s', timestamp, body),
          },
          body,
        });
        await res.arrayBuffer();
      }
    }),
  );
  return count / (msSince(started) / 1000);
}

async function expiryLag(db: Knex, base: string, apiKey: string): Promise<string> {
  const holdSeconds = 30;
  const venueId = await benchVenue(db, 'Expiry Arena', { holdSeconds });
  const partner = await db('api_keys').select('partner_id').first(); // the bench partner
  await db('venue_grants').insert({ partner_id: partner.partner_id, venue_id: venueId });
  const slots = (await slotsOf(db, venueId)).slice(0, 20);
  const holdIds: string[] = [];
  for (const slot of slots) {
    const res = await fetch(`${base}/api/v1/bookings/hold`, {
      method: 'POST',
      headers: { 'x-api-key': apiKey, 'content-type': 'application/json' },
      body: JSON.stringify({
        venue_id: venueId,
        resource_id: slot.resource_id,
        slot_start: slot.slot_start,
        slot_duration_minutes: 60,
        idempotency_key: randomUUID(),
      }),
    });
    holdIds.push(((await res.json()) as { hold_id: string }).hold_id);
  }
  const deadline = Date.now() + (holdSeconds + 20) * 1000;
  let lags: number[] = [];
  while (Date.now() < deadline) {
    const { rows } = await db.raw<{ rows: { lag_ms: number }[] }>(
      `select extract(epoch from (e.occurred_at - h.hold_expiry_at)) * 1000 as lag_ms
         from holds h join events e on e.hold_id = h.id and e.event_type = 'hold_expired'
        where h.id = any (?::uuid[])`,
      [holdIds],
    );
    lags = rows.map((r) => Number(r.lag_ms));
    if (lags.length === holdIds.length) break;
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  return (
    `hold_expired after hold_expiry_at, ${holdIds.length} holds of ${holdSeconds} s, one worker:\n\n` +
    '| expired | p50 ms | max ms |\n|---:|---:|---:|\n' +
    `| ${lags.length} | ${percentile(lags, 50)} | ${percentile(lags, 100)} |`
  );
}

interface Receiver {
  url: string;
  /** Arrival time (performance.now()) of the first delivery of each hold. */
  arrivals: Map<string, number>;
  count: number;
  close(): Promise<void>;
}

async function startReceiver(): Promise<Receiver> {
  const receiver: Receiver = { url: '', arrivals: new Map(), count: 0, close: () => Promise.resolve() };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const at = performance.now();
      receiver.count++;
      try {
        const event = JSON.parse(Buffer.concat(chunks).toString()) as { hold_id?: string };
        if (event.hold_id && !receiver.arrivals.has(event.hold_id)) receiver.arrivals.set(event.hold_id, at);
      } catch {
        // the plain loop's bodies carry no hold
      }
      res.writeHead(204).end();
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
  receiver.close = () => {
    server.closeAllConnections();
    return new Promise((resolve) => server.close(() => resolve()));
  };
  return receiver;
}
