/**
 * Availability latency for a venue with 20 resources while the reservations table grows from 10
 * thousand to 1 million rows (other venues' bookings and this venue's history). It must stay flat:
 * the grid reads only live reservations overlapping the requested day, through the exclusion
 * constraint's GiST index.
 */
import type { Knex } from '../../db/postgres/knex.ts';
import * as resources from '../../db/queries/resources.ts';
import { BENCH_COURT, benchPartners, benchVenue, msSince, percentile, startWebProcess } from './harness.ts';

const SIZES = [10_000, 100_000, 1_000_000];
const FILLER_UNITS = 1000;
const SEQUENTIAL_REQUESTS = 300;
const CONCURRENT_CLIENTS = 16;

/** Returns the markdown table of the availability benchmark. */
export async function benchAvailability(url: string, db: Knex, seconds: number): Promise<string> {
  const venueId = await benchVenue(db, 'Measured Arena', { courts: 18 });
  const fillerVenue = await benchVenue(db, 'Filler Arena', { courts: FILLER_UNITS });
  const plain = (await resources.listByVenue(db, venueId)).map((r) => r.id);
  await db.transaction(async (trx) => {
    await resources.insert(trx, { ...BENCH_COURT, venueId, parts: [plain[0]!, plain[1]!] });
    await resources.insert(trx, { ...BENCH_COURT, venueId, parts: [plain[2]!, plain[3]!] });
  });
  const { apiKey, partnerId } = (await benchPartners(db, venueId, 1))[0]!;
  // One hold row per filler unit (reservations point at holds), and today's holds on the measured venue.
  await db.raw(
    `insert into holds (partner_id, venue_id, resource_id, slot_id, slot_start, slot_end, status, hold_expiry_at, price_rupees)
     select ?, r.venue_id, r.id, gen_random_uuid(), '2020-01-01', '2020-01-02', 'CONFIRMED', '2020-01-01', 500
     from resources r where r.venue_id in (?, ?)`,
    [partnerId, fillerVenue, venueId],
  );
  const date = (
    await db.raw<{ rows: { d: string }[] }>(
      "select to_char((now() at time zone 'Asia/Kolkata')::date + 1, 'YYYY-MM-DD') as d",
    )
  ).rows[0]!.d;
  // Every other slot tomorrow of the measured courts is booked, so the grid has real work to do.
  await db.raw(
    `insert into reservations (hold_id, unit_id, resource_id, during, active)
     select h.id, h.resource_id, h.resource_id, tstzrange(s.slot_start, s.slot_end), true
     from holds h join resources r on r.id = h.resource_id and r.venue_id = ?
     cross join lateral venue_slots(r.venue_id, ?::date, r.id) s
     where extract(hour from s.slot_start at time zone 'Asia/Kolkata')::int % 2 = 0
       and not exists (select 1 from resource_parts p where p.resource_id = r.id)`,
    [venueId, date],
  );

  const web = await startWebProcess(url);
  const rows = [
    '| reservations rows | 1 client p50 ms | 1 client p99 ms | 16 clients p50 ms | 16 clients p99 ms | 16 clients req/s |',
    '|---:|---:|---:|---:|---:|---:|',
  ];
  try {
    const target = `${web.base}/api/v1/slots/availability?venue_id=${venueId}&date=${date}`;
    const get = async () => {
      const t = process.hrtime.bigint();
      const res = await fetch(target, { headers: { 'x-api-key': apiKey } });
      if (res.status !== 200) throw new Error(`availability answered ${res.status}`);
      await res.arrayBuffer();
      return msSince(t);
    };
    for (const size of SIZES) {
      await growReservations(db, fillerVenue, size);
      for (let i = 0; i < 30; i++) await get(); // warm-up
      const sequential: number[] = [];
      for (let i = 0; i < SEQUENTIAL_REQUESTS; i++) sequential.push(await get());
      const concurrent: number[] = [];
      const started = process.hrtime.bigint();
      const deadline = Date.now() + seconds * 1000;
      await Promise.all(
        Array.from({ length: CONCURRENT_CLIENTS }, async () => {
          while (Date.now() < deadline) concurrent.push(await get());
        }),
      );
      const rate = concurrent.length / (msSince(started) / 1000);
      rows.push(
        `| ${size.toLocaleString('en')} | ${percentile(sequential, 50)} | ${percentile(sequential, 99)} | ` +
          `${percentile(concurrent, 50)} | ${percentile(concurrent, 99)} | ${Math.round(rate)} |`,
      );
    }
  } finally {
    await web.stop();
  }
  return `20 resources (two of them convertible), ${SEQUENTIAL_REQUESTS} sequential requests, then ${CONCURRENT_CLIENTS} clients for ${seconds} s\n\n${rows.join('\n')}`;
}

/** Adds filler reservations (non-overlapping per unit, half of them inactive) up to `size` rows. */
async function growReservations(db: Knex, fillerVenue: string, size: number): Promise<void> {
  const [{ n }] = (await db('reservations').count({ n: '*' })) as [{ n: number }];
  const missing = size - Number(n);
  if (missing <= 0) return;
  const offset = Number(
    (
      await db('reservations')
        .whereIn('hold_id', db('holds').select('id').where('venue_id', fillerVenue))
        .count({ n: '*' })
    )[0]!.n,
  );
  await db.raw(
    `with units as (
       select h.id as hold_id, h.resource_id, row_number() over (order by h.id) - 1 as k
       from holds h where h.venue_id = ?
     )
     insert into reservations (hold_id, unit_id, resource_id, during, active)
     select u.hold_id, u.resource_id, u.resource_id,
            tstzrange(timestamptz '2020-01-01' + make_interval(hours => (g / ${FILLER_UNITS})::int),
                      timestamptz '2020-01-01' + make_interval(hours => (g / ${FILLER_UNITS})::int + 1)),
            g % 2 = 0
     from generate_series(?::bigint, ?::bigint - 1) g
     join units u on u.k = g % ${FILLER_UNITS}`,
    [fillerVenue, offset, offset + missing],
  );
  await db.raw('analyze reservations');
}
