/**
 * Hold groups against single holds, at 16 clients through HTTP against `npm run web`: a cycle of one
 * hold → confirm, then a cycle of one 4-item group (four courts at one start) → its confirm, each
 * for the same time on never-contended windows. What a group costs the server (the web process and
 * PostgreSQL, in CPU) against four single cycles' worth of windows, and its latencies.
 */
import { randomUUID } from 'node:crypto';
import type { Knex } from '../../db/postgres/knex.ts';
import {
  benchPartners,
  benchVenue,
  msSince,
  percentile,
  serverCpuSeconds,
  slotSupply,
  startWebProcess,
  type Slot,
} from './harness.ts';

const CLIENTS = 16;
const ITEMS = 4;

interface Client {
  apiKey: string;
}

/** One cycle: the latencies of its two calls; throws with the failure. */
type Cycle = (client: Client) => Promise<[number, number]>;

/** Returns the markdown table of the hold-group benchmark. */
export async function benchHoldGroups(url: string, db: Knex, seconds: number): Promise<string> {
  const venueId = await benchVenue(db, 'Bench Group Arena');
  const clients = await benchPartners(db, venueId, CLIENTS);
  // Slots come by date, start, then court: four in a row are four courts at one start.
  const takeSlot = await slotSupply(db, venueId);
  const web = await startWebProcess(url);
  const post = async (path: string, key: string, body: unknown) => {
    const res = await fetch(`${web.base}/api/v1${path}`, {
      method: 'POST',
      headers: { 'x-api-key': key, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    const json = (await res.json()) as Record<string, string>;
    if (res.status !== 201) throw new Error(`${res.status} ${json.error}`);
    return json;
  };
  const single: Cycle = async (client) => {
    let t = process.hrtime.bigint();
    const held = await post('/bookings/hold', client.apiKey, {
      ...itemOf(takeSlot()),
      venue_id: venueId,
      idempotency_key: randomUUID(),
    });
    const holdMs = msSince(t);
    t = process.hrtime.bigint();
    await post('/bookings/confirm', client.apiKey, { ...confirmBody(), hold_id: held.hold_id });
    return [holdMs, msSince(t)];
  };
  const group: Cycle = async (client) => {
    const items = Array.from({ length: ITEMS }, () => itemOf(takeSlot()));
    let t = process.hrtime.bigint();
    const held = await post('/bookings/hold-groups', client.apiKey, {
      venue_id: venueId,
      items,
      idempotency_key: randomUUID(),
    });
    const createMs = msSince(t);
    t = process.hrtime.bigint();
    await post(`/bookings/hold-groups/${held.hold_group_id}/confirm`, client.apiKey, confirmBody());
    return [createMs, msSince(t)];
  };

  const rows = [
    '| cycle | cycles/s | windows/s | first call p50 / p99 ms | confirm p50 / p99 ms | server CPU ms per cycle (web + PostgreSQL) | errors |',
    '|---|---:|---:|---:|---:|---:|---:|',
  ];
  const perCycle: number[] = [];
  try {
    for (const [name, cycle, windows] of [
      ['hold → confirm', single, 1],
      [`${ITEMS}-item group → confirm`, group, ITEMS],
    ] as const) {
      await drive(cycle, clients, 1); // warm-up
      const before = await serverCpuSeconds(web.pid);
      const result = await drive(cycle, clients, seconds);
      const after = await serverCpuSeconds(web.pid);
      const webMs = ((after.web - before.web) * 1000) / result.cycles;
      const pgMs = ((after.postgres - before.postgres) * 1000) / result.cycles;
      perCycle.push(webMs + pgMs);
      rows.push(
        `| ${name} | ${Math.round(result.rate)} | ${Math.round(result.rate * windows)} | ` +
          `${percentile(result.first, 50)} / ${percentile(result.first, 99)} | ` +
          `${percentile(result.confirm, 50)} / ${percentile(result.confirm, 99)} | ` +
          `${(webMs + pgMs).toFixed(2)} (${webMs.toFixed(2)} + ${pgMs.toFixed(2)}) | ${result.errors} |`,
      );
    }
  } finally {
    await web.stop();
  }
  const ratio = perCycle[1]! / perCycle[0]!;
  return (
    `${seconds} s per row, ${CLIENTS} clients, windows never contended\n\n${rows.join('\n')}\n\n` +
    `A ${ITEMS}-item group → confirm costs ${ratio.toFixed(2)}× the server CPU of one hold → confirm ` +
    `(${((ratio / ITEMS) * 100).toFixed(0)}% of what its ${ITEMS} windows cost as single cycles).`
  );
}

async function drive(
  cycle: Cycle,
  clients: Client[],
  seconds: number,
): Promise<{ rate: number; cycles: number; first: number[]; confirm: number[]; errors: number }> {
  const first: number[] = [];
  const confirm: number[] = [];
  let errors = 0;
  const started = process.hrtime.bigint();
  const deadline = Date.now() + seconds * 1000;
  await Promise.all(
    clients.map(async (client) => {
      while (Date.now() < deadline) {
        try {
          const [a, b] = await cycle(client);
          first.push(a);
          confirm.push(b);
        } catch {
          errors++;
        }
      }
    }),
  );
  return { rate: first.length / (msSince(started) / 1000), cycles: first.length, first, confirm, errors };
}

function itemOf(slot: Slot) {
  return {
    resource_id: slot.resource_id,
    slot_start: slot.slot_start.toISOString(),
    slot_duration_minutes: 60,
  };
}

function confirmBody() {
  return {
    payment_reference: 'bench',
    customer_name: 'Bench Customer',
    customer_phone: '9812345678',
    idempotency_key: randomUUID(),
  };
}
