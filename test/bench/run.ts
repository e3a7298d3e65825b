/**
 * `npm run bench [discovery|hold-confirm|edge|events|hold-groups|series|availability|webhooks|credits-waitlist|retention|stream]...`: the benchmarks of docs/BENCHMARKS.md
 * (all of them by default), each on a fresh database on DATABASE_URL's server or an embedded
 * PostgreSQL, with `npm run web` as its own process and the load generator in this one, side by
 * side as on one machine. Prints markdown. BENCH_SECONDS (default 10) sets the length of a run;
 * BENCH_CONNECTIONS (default 16) the discovery concurrency; BENCH_RETENTION_ROWS (default 1,000,000)
 * the old rows of each table the retention benchmark prunes; BENCH_EVENTS_ROWS (default 1,000,000)
 * the history the events benchmark pages through; BENCH_EDGE_RATE (default 150) the cycles/s the
 * edge benchmark offers; BENCH_STREAMS (default 1,000) the streams the stream benchmark opens.
 */
import { loadConfigOrExit } from '../../db/platform/config.ts';
import { createLogger } from '../../db/platform/log.ts';
import { postgresServer } from '../../db/schema/scratch-database.ts';
import { benchAvailability } from './availability.ts';
import { benchCreditsWaitlist } from './credits-waitlist.ts';
import { benchDiscovery } from './discovery.ts';
import { benchEdge } from './edge.ts';
import { benchEvents } from './events.ts';
import { withBenchDatabase } from './harness.ts';
import { benchHoldConfirm } from './hold-confirm.ts';
import { benchHoldGroups } from './hold-groups.ts';
import { benchRetention } from './retention.ts';
import { benchSeries } from './series.ts';
import { benchStream } from './stream.ts';
import { benchWebhooks } from './webhooks.ts';

const seconds = Number(process.env.BENCH_SECONDS ?? 10);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 16);
const config = loadConfigOrExit();
const log = createLogger('warn');

const benches = {
  discovery: (url: string, db: Parameters<typeof benchDiscovery>[1]) =>
    benchDiscovery(url, db, seconds, connections),
  'hold-confirm': (url: string, db: Parameters<typeof benchDiscovery>[1]) =>
    benchHoldConfirm(url, db, log, seconds),
  events: (url: string, db: Parameters<typeof benchDiscovery>[1]) => benchEvents(url, db, seconds),
  edge: (url: string, db: Parameters<typeof benchDiscovery>[1]) => benchEdge(url, db, seconds),
  'hold-groups': (url: string, db: Parameters<typeof benchDiscovery>[1]) => benchHoldGroups(url, db, seconds),
  series: (url: string, db: Parameters<typeof benchDiscovery>[1]) => benchSeries(url, db, seconds),
  availability: (url: string, db: Parameters<typeof benchDiscovery>[1]) =>
    benchAvailability(url, db, seconds),
  webhooks: (url: string, db: Parameters<typeof benchDiscovery>[1]) => benchWebhooks(url, db, seconds),
  'credits-waitlist': (url: string, db: Parameters<typeof benchDiscovery>[1]) =>
    benchCreditsWaitlist(url, db, seconds),
  retention: (url: string, db: Parameters<typeof benchDiscovery>[1]) =>
    benchRetention(url, db, Number(process.env.BENCH_RETENTION_ROWS ?? 1_000_000)),
  stream: (url: string, db: Parameters<typeof benchDiscovery>[1]) => benchStream(url, db, seconds),
};
type BenchName = keyof typeof benches;

const chosen = process.argv.slice(2);
const unknown = chosen.filter((name) => !(name in benches));
if (unknown.length) {
  console.error(`unknown benchmark ${unknown.join(', ')}; choose from ${Object.keys(benches).join(', ')}`);
  process.exit(2);
}
const names = (chosen.length ? chosen : Object.keys(benches)) as BenchName[];

const server = await postgresServer(config.databaseUrl, 'bench-pg', log);
try {
  console.log(`PostgreSQL: ${server.embedded ? 'embedded (.data/bench-pg)' : 'DATABASE_URL'}`);
  for (const name of names) {
    const table = await withBenchDatabase(server.adminUrl, log, (url, db) => benches[name](url, db));
    console.log(`\n## ${name}\n\n${table}`);
  }
} finally {
  await server.stop();
}
