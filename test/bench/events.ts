/**
 * The missed-event pull, `GET /events`, with 10 events and with BENCH_EVENTS_ROWS (default
 * 1,000,000) events at the caller's venue: a page must cost the same however long the history.
 * Four pages: the first, the one after a cursor halfway through, the first of one rare type, and
 * the first since a moment halfway through. Events are spread over 30 days and the event types, in
 * transactions of 10,000 (positions are per transaction, as in service), then vacuumed and
 * analysed as autovacuum would have. Four clients, one key, sequential requests each; pages of ten,
 * so that the small history's first page is as full as the large one's.
 */
import { Pool } from 'undici';
import type { Knex } from '../../db/postgres/knex.ts';
import { EVENT_TYPES } from '../../db/queries/events.ts';
import { benchPartners, benchVenue, msSince, percentile, startWebProcess } from './harness.ts';

const CLIENTS = 4;
/** Events per page: what ten events fill, so that both histories answer pages of one size. */
const LIMIT = 10;
const BATCH = 10_000;

/** Returns the markdown table of the events benchmark. */
export async function benchEvents(url: string, db: Knex, seconds: number): Promise<string> {
  const large = Number(process.env.BENCH_EVENTS_ROWS ?? 1_000_000);
  const venueId = await benchVenue(db, 'Events Arena', { courts: 1 });
  const [client] = await benchPartners(db, venueId, 1);
  const web = await startWebProcess(url);
  const pool = new Pool(web.base, { connections: CLIENTS });
  const results: Record<string, Record<number, number[]>> = {};
  try {
    for (const total of [10, large]) {
      const filled = Date.now();
      await fill(db, venueId, client!.partnerId, total);
      const fillSeconds = (Date.now() - filled) / 1000;
      const pages = await pagesAt(db, venueId);
      for (const [name, query] of Object.entries(pages)) {
        const get = async () => {
          const res = await pool.request({
            method: 'GET',
            path: `/api/v1/events${query}`,
            headers: { 'x-api-key': client!.apiKey },
          });
          const body = (await res.body.json()) as { data?: unknown[] };
          if (res.statusCode !== 200 || !body.data?.length) throw new Error(`${res.statusCode} ${name}`);
        };
        await drive(get, 1); // warm-up: the statement prepared on every connection
        (results[name] ??= {})[total] = await drive(get, Math.max(2, seconds / 4));
      }
      console.error(`events: ${total} events (filled in ${fillSeconds.toFixed(1)} s) measured`);
    }
  } finally {
    await pool.close();
    await web.stop();
  }
  const rows = Object.entries(results).map(([name, byTotal]) => {
    const small = byTotal[10]!;
    const big = byTotal[large]!;
    const ratio = percentile(big, 50) / percentile(small, 50);
    return (
      `| ${name} | ${percentile(small, 50)} | ${percentile(small, 99)} | ${percentile(big, 50)} | ` +
      `${percentile(big, 99)} | ${ratio.toFixed(2)} |`
    );
  });
  return [
    `${CLIENTS} clients, one key; pages of ${LIMIT} (the 10-event history fills the first; the others hold what is left of it)`,
    '',
    `| page | p50 ms, 10 events | p99 ms, 10 | p50 ms, ${large.toLocaleString('en')} | p99 ms, ${large.toLocaleString('en')} | p50 ratio |`,
    '|---|---:|---:|---:|---:|---:|',
    ...rows,
  ].join('\n');
}

/** Adds events until the venue has `total`, in transactions of BATCH, over the last 30 days. */
async function fill(db: Knex, venueId: string, partnerId: string, total: number): Promise<void> {
  const { rows } = await db.raw<{ rows: { n: number }[] }>(
    'select count(*)::integer as n from events where venue_id = ?',
    [venueId],
  );
  for (let from = rows[0]!.n; from < total; from += BATCH) {
    await db.raw(
      `insert into events (event_type, venue_id, partner_id, slot_id, occurred_at, recorded_at)
       select (?::text[])[1 + (i % ?)], ?, ?, gen_random_uuid(), at, at
         from generate_series(?::bigint, ?::bigint) i,
              lateral (select now() - interval '30 days' + i * (interval '30 days' / ?)) t(at)`,
      [
        [...EVENT_TYPES],
        EVENT_TYPES.length,
        venueId,
        partnerId,
        from,
        Math.min(from + BATCH, total) - 1,
        total,
      ],
    );
  }
  await db.raw('vacuum analyze events');
}

/** The query strings of the four pages, as a partner would ask at this fill. */
async function pagesAt(db: Knex, venueId: string): Promise<Record<string, string>> {
  const { rows } = await db.raw<{ rows: { id: string; occurred_at: Date }[] }>(
    `select id, occurred_at from events where venue_id = ?
      order by tx, seq offset (select count(*) / 2 from events where venue_id = ?) limit 1`,
    [venueId, venueId],
  );
  const middle = rows[0]!;
  return {
    first: `?limit=${LIMIT}`,
    'after a cursor halfway': `?limit=${LIMIT}&starting_after=${middle.id}`,
    'one type (booking_refunded)': `?limit=${LIMIT}&types=booking_refunded`,
    'since halfway': `?limit=${LIMIT}&since=${encodeURIComponent(middle.occurred_at.toISOString())}`,
  };
}

/** Sends `get` from CLIENTS clients for `seconds`; the latencies in ms. */
async function drive(get: () => Promise<void>, seconds: number): Promise<number[]> {
  const latencies: number[] = [];
  const deadline = Date.now() + seconds * 1000;
  await Promise.all(
    Array.from({ length: CLIENTS }, async () => {
      while (Date.now() < deadline) {
        const t = process.hrtime.bigint();
        await get();
        latencies.push(msSince(t));
      }
    }),
  );
  return latencies;
}
