/**
 * Hold + confirm cycles on non-conflicting slots at 1, 16 and 64 concurrent clients, two ways:
 * through HTTP against `npm run web`, and the same use cases called in-process (the same SQL,
 * authentication and rate-limit statement included, minus HTTP, Koa and JSON) as the ceiling.
 */
import { presentConfirmed, presentHold } from '../../api/presenters/booking.ts';
import { confirmBooking } from '../../api/use-cases/confirm-booking.ts';
import { createHold } from '../../api/use-cases/create-hold.ts';
import { hashApiKey } from '../../db/rules/api-key.ts';
import { createBoss } from '../../db/jobs/boss.ts';
import { createDb, type Knex } from '../../db/postgres/knex.ts';
import type { Logger } from '../../db/platform/log.ts';
import * as apiKeys from '../../db/queries/api-keys.ts';
import type { ConfirmedBooking } from '../../db/queries/bookings.ts';
import type { HoldRow } from '../../db/queries/holds.ts';
import {
  benchPartners,
  benchVenue,
  msSince,
  confirmBody,
  holdBody,
  percentile,
  slotSupply,
  startWebProcess,
  type Slot,
} from './harness.ts';

interface Client {
  partnerId: string;
  apiKey: string;
}
/** One cycle's work: hold then confirm; returns the two latencies, or throws with the failure. */
type Cycle = (client: Client, venueId: string, slot: Slot) => Promise<[number, number]>;

const CLIENTS = [1, 16, 64];

/** Returns the markdown table of the hold + confirm benchmark. */
export async function benchHoldConfirm(url: string, db: Knex, log: Logger, seconds: number): Promise<string> {
  const venueId = await benchVenue(db, 'Bench Arena');
  const clients = await benchPartners(db, venueId, Math.max(...CLIENTS));
  const takeSlot = await slotSupply(db, venueId);

  const rows = [
    '| mode | clients | cycles/s | hold p50 ms | hold p99 ms | confirm p50 ms | confirm p99 ms | errors |',
    '|---|---:|---:|---:|---:|---:|---:|---:|',
  ];
  const ratios: string[] = [];
  const web = await startWebProcess(url);
  const pool = createDb(url, { poolMax: 10, applicationName: 'bench-direct' });
  const boss = createBoss(url, 'web', log);
  await boss.start();
  try {
    const modes: [string, Cycle][] = [
      ['HTTP (npm run web)', httpCycle(web.base)],
      ['in-process, same SQL', directCycle(pool, boss)],
    ];
    for (const clientCount of CLIENTS) {
      const rates: number[] = [];
      for (const [mode, cycle] of modes) {
        await drive(cycle, clients.slice(0, clientCount), venueId, takeSlot, 1); // warm-up
        const result = await drive(cycle, clients.slice(0, clientCount), venueId, takeSlot, seconds);
        rates.push(result.rate);
        rows.push(
          `| ${mode} | ${clientCount} | ${Math.round(result.rate)} | ${percentile(result.hold, 50)} | ` +
            `${percentile(result.hold, 99)} | ${percentile(result.confirm, 50)} | ${percentile(result.confirm, 99)} | ${result.errors} |`,
        );
      }
      ratios.push(
        `${clientCount} clients: HTTP reaches ${Math.round((rates[0]! / rates[1]!) * 100)}% of the in-process rate`,
      );
    }
  } finally {
    await boss.stop({ graceful: false });
    await pool.destroy();
    await web.stop();
  }
  return `${seconds} s per row, one slot per cycle, never contended\n\n${rows.join('\n')}\n\n${ratios.join('; ')}.`;
}

async function drive(
  cycle: Cycle,
  clients: Client[],
  venueId: string,
  takeSlot: () => Slot,
  seconds: number,
): Promise<{ rate: number; hold: number[]; confirm: number[]; errors: number }> {
  const hold: number[] = [];
  const confirm: number[] = [];
  let errors = 0;
  const started = process.hrtime.bigint();
  const deadline = Date.now() + seconds * 1000;
  await Promise.all(
    clients.map(async (client) => {
      while (Date.now() < deadline) {
        try {
          const [h, c] = await cycle(client, venueId, takeSlot());
          hold.push(h);
          confirm.push(c);
        } catch {
          errors++;
        }
      }
    }),
  );
  return { rate: hold.length / (msSince(started) / 1000), hold, confirm, errors };
}

function httpCycle(base: string): Cycle {
  const post = async (path: string, key: string, body: unknown) => {
    const res = await fetch(`${base}/api/v1${path}`, {
      method: 'POST',
      headers: { 'x-api-key': key, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    const json = (await res.json()) as Record<string, string>;
    if (res.status !== 201) throw new Error(`${res.status} ${json.error}`);
    return json;
  };
  return async (client, venueId, slot) => {
    let t = process.hrtime.bigint();
    const held = await post('/bookings/hold', client.apiKey, holdBody(venueId, slot));
    const holdMs = msSince(t);
    t = process.hrtime.bigint();
    await post('/bookings/confirm', client.apiKey, confirmBody(held.hold_id!));
    return [holdMs, msSince(t)];
  };
}

function directCycle(db: Knex, boss: Parameters<typeof createHold>[0]['boss']): Cycle {
  return async (client, venueId, slot) => {
    const keyHash = hashApiKey(client.apiKey);
    let t = process.hrtime.bigint();
    await apiKeys.authenticate(db, keyHash);
    const held = presentHold(
      (await createHold({ db, boss }, client.partnerId, {
        ...holdBody(venueId, slot),
        slot_start: slot.slot_start,
      })) as HoldRow,
    );
    const holdMs = msSince(t);
    t = process.hrtime.bigint();
    await apiKeys.authenticate(db, keyHash);
    const { customer_phone, ...body } = confirmBody(held.hold_id);
    const confirm = { ...body, customer_phone: `+91${customer_phone}` };
    presentConfirmed((await confirmBooking({ db }, client.partnerId, confirm)) as ConfirmedBooking);
    return [holdMs, msSince(t)];
  };
}
