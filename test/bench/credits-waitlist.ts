/**
 * Packages and waitlist, measured from outside against `npm run web` (and `npm run worker`):
 * - credit confirms: hold (untimed) then confirm (timed) at 16 clients, paid, paying with a credit
 *   of each client's own purchase, and paying with credits of one purchase all clients share (the
 *   worst case: every confirm locks the same purchase row);
 * - promotion lag: windows freed at a steady rate, each with a waiting entry; from the freeing
 *   commit to the entry's promotion (both on the database clock).
 */
import { randomUUID } from 'node:crypto';
import type { Knex } from '../../db/postgres/knex.ts';
import * as packages from '../../db/queries/packages.ts';
import {
  benchPartners,
  benchVenue,
  msSince,
  percentile,
  startWebProcess,
  startWorker,
  stopProcess,
  slotSupply,
  type Slot,
} from './harness.ts';

const CLIENTS = 16;
const RELEASES_PER_SECOND = 20;

interface Client {
  apiKey: string;
  phone: string;
}

/** Returns the markdown of the credits and waitlist benchmark. */
export async function benchCreditsWaitlist(url: string, db: Knex, seconds: number): Promise<string> {
  const venueId = await benchVenue(db, 'Credits Arena');
  const partners = await benchPartners(db, venueId, CLIENTS);
  const takeSlot = await slotSupply(db, venueId);
  const web = await startWebProcess(url);
  const post = (path: string, key: string, body: unknown) =>
    fetch(`${web.base}/api/v1${path}`, {
      method: 'POST',
      headers: { 'x-api-key': key, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    }).then(async (res) => ({ status: res.status, body: (await res.json()) as Record<string, unknown> }));

  // Enough credits for any run: a package holds at most 1000, so each buyer gets several.
  const packageId = await packages.insert(db, {
    venueId,
    name: 'Bench 1000',
    credits: 1000,
    priceRupees: 1,
    validDays: 30,
  });
  const buy = async (client: Client, count: number) => {
    for (let i = 0; i < count; i++) {
      const res = await post(`/packages/${packageId}/purchase`, client.apiKey, {
        customer_phone: client.phone,
        payment_method: 'cash',
        idempotency_key: randomUUID(),
      });
      if (res.status !== 201) throw new Error(`purchase answered ${res.status}`);
    }
  };

  const own: Client[] = partners.map((p, i) => ({
    apiKey: p.apiKey,
    phone: `90000${String(i).padStart(5, '0')}`,
  }));
  const shared: Client[] = partners.map(() => ({ apiKey: partners[0]!.apiKey, phone: '9999999999' }));
  for (const client of own) await buy(client, 2);
  await buy(shared[0]!, 10);

  const modes: [string, Client[], boolean][] = [
    ['paid', own, false],
    ['credit, own purchase per client', own, true],
    ['credit, one purchase shared by all', shared, true],
  ];
  const rows = [
    '| confirm | clients | confirms/s | confirm p50 ms | confirm p99 ms | credits taken | errors |',
    '|---|---:|---:|---:|---:|---:|---:|',
  ];
  const rates: number[] = [];
  try {
    for (const [mode, clients, useCredit] of modes) {
      await drive(post, venueId, clients, takeSlot, useCredit, 1); // warm-up
      const result = await drive(post, venueId, clients, takeSlot, useCredit, seconds);
      rates.push(result.rate);
      rows.push(
        `| ${mode} | ${clients.length} | ${Math.round(result.rate)} | ${percentile(result.confirm, 50)} | ` +
          `${percentile(result.confirm, 99)} | ${result.credits} | ${result.errors} |`,
      );
    }
    const ratios =
      `A credit-paid confirm runs at ${Math.round((rates[1]! / rates[0]!) * 100)}% of the paid rate with ` +
      `a purchase per client, ${Math.round((rates[2]! / rates[0]!) * 100)}% when all share one purchase.`;

    const lag = await promotionLag(db, post, venueId, partners[0]!.apiKey, url, seconds);
    return `${seconds} s per row; hold untimed, confirm timed\n\n${rows.join('\n')}\n\n${ratios}\n\n${lag}`;
  } finally {
    await web.stop();
  }
}

type Post = (
  path: string,
  key: string,
  body: unknown,
) => Promise<{ status: number; body: Record<string, unknown> }>;

async function drive(
  post: Post,
  venueId: string,
  clients: Client[],
  takeSlot: () => Slot,
  useCredit: boolean,
  seconds: number,
): Promise<{ rate: number; confirm: number[]; credits: number; errors: number }> {
  const confirm: number[] = [];
  let credits = 0;
  let errors = 0;
  let busy = 0;
  const deadline = Date.now() + seconds * 1000;
  await Promise.all(
    clients.map(async (client) => {
      while (Date.now() < deadline) {
        const slot = takeSlot();
        const held = await post('/bookings/hold', client.apiKey, {
          venue_id: venueId,
          resource_id: slot.resource_id,
          slot_start: slot.slot_start.toISOString(),
          slot_duration_minutes: 60,
          idempotency_key: randomUUID(),
        });
        if (held.status !== 201) {
          errors++;
          continue;
        }
        const t = process.hrtime.bigint();
        const res = await post('/bookings/confirm', client.apiKey, {
          hold_id: held.body.hold_id,
          payment_reference: 'bench',
          customer_name: 'Bench Customer',
          customer_phone: client.phone,
          idempotency_key: randomUUID(),
          ...(useCredit ? { use_package_credit: true } : {}),
        });
        const ms = msSince(t);
        busy += ms;
        if (res.status !== 201) errors++;
        else {
          confirm.push(ms);
          if (res.body.package_credit_consumed === true) credits++;
        }
      }
    }),
  );
  // Confirms per second of confirm time across the clients (the untimed holds left out).
  return { rate: confirm.length / (busy / 1000 / clients.length), confirm, credits, errors };
}

/** Frees windows at a steady rate, each with one waiting entry, and times their promotions. */
async function promotionLag(
  db: Knex,
  post: Post,
  venueId: string,
  apiKey: string,
  url: string,
  seconds: number,
) {
  const worker = await startWorker(url);
  const { rows: courts } = await db.raw<{ rows: { id: string; d: string; start: Date }[] }>(
    // The last slot of day 20 of each court: the confirm runs above never get that far.
    `select r.id, to_char((now() at time zone v.timezone)::date + 20, 'YYYY-MM-DD') as d,
            (((now() at time zone v.timezone)::date + 20) + r.closes_at - interval '1 hour') at time zone v.timezone
              as start
       from resources r join venues v on v.id = r.venue_id where v.id = ? order by r.id`,
    [venueId],
  );
  const total = Math.min(courts.length, RELEASES_PER_SECOND * seconds);
  const started = Date.now();
  try {
    for (let i = 0; i < total; i++) {
      const court = courts[i]!;
      const wait = started + (i * 1000) / RELEASES_PER_SECOND - Date.now();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      const joined = await post('/waitlist', apiKey, {
        venue_id: venueId,
        resource_id: court.id,
        slot_date: court.d,
        customer_phone: '9876543210',
      });
      const held = await post('/bookings/hold', apiKey, {
        venue_id: venueId,
        resource_id: court.id,
        slot_start: new Date(court.start).toISOString(),
        slot_duration_minutes: 60,
        idempotency_key: randomUUID(),
      });
      const released = await post(`/partner/holds/${String(held.body.hold_id)}/cancel`, apiKey, {
        idempotency_key: randomUUID(),
      });
      if (joined.status !== 201 || held.status !== 201 || released.status !== 200) {
        throw new Error(`join ${joined.status}, hold ${held.status}, release ${released.status}`);
      }
    }
    const deadline = Date.now() + 60_000;
    let lags: number[] = [];
    while (Date.now() < deadline) {
      const { rows } = await db.raw<{ rows: { ms: number }[] }>(
        `select extract(epoch from w.promoted_at - e.occurred_at) * 1000 as ms
           from waitlist_promotions p join events e on e.id = p.event_id join waitlist_entries w on w.id = p.entry_id`,
      );
      lags = rows.map((r) => Number(r.ms));
      if (lags.length >= total) break;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    return (
      `Promotion lag, ${total} windows freed at ${RELEASES_PER_SECOND}/s, one worker process: ` +
      `${lags.length} promoted; p50 ${percentile(lags, 50)} ms, p99 ${percentile(lags, 99)} ms, ` +
      `max ${percentile(lags, 100)} ms from the release's commit to the promotion.`
    );
  } finally {
    await stopProcess(worker);
  }
}
