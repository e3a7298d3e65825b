/** Discovery under load: autocannon against `npm run web`, compared with /health. */
import autocannon from 'autocannon';
import { seedDemo } from '../../db/cli/demo-seed.ts';
import type { Knex } from '../../db/postgres/knex.ts';
import { benchPartners, startWebProcess } from './harness.ts';

interface BenchCase {
  label: string;
  url: string;
  headers?: Record<string, string>;
  setupClient?: (client: autocannon.Client) => void;
}

/** Returns the markdown table of the discovery benchmark. */
export async function benchDiscovery(
  url: string,
  db: Knex,
  seconds: number,
  connections: number,
): Promise<string> {
  const seed = await db.transaction((trx) => seedDemo(trx));
  const keys = (await benchPartners(db, seed.venue_id, connections)).map((p) => p.apiKey);
  const web = await startWebProcess(url);
  try {
    const venues = `${web.base}/api/v1/partner/venues`;
    const resources = `${venues}/${seed.venue_id}/resources`;
    let next = 0;
    const keyPerConnection = (client: autocannon.Client) => {
      client.setHeaders({ 'x-api-key': keys[next++ % keys.length]! });
    };
    const cases: BenchCase[] = [
      { label: 'GET /health (no key, one `select 1`)', url: `${web.base}/health` },
      {
        label: 'GET /partner/venues, one key for all connections',
        url: venues,
        headers: { 'x-api-key': keys[0]! },
      },
      { label: 'GET /partner/venues, one key per connection', url: venues, setupClient: keyPerConnection },
      {
        label: 'GET /partner/venues/{id}/resources, one key per connection',
        url: resources,
        setupClient: keyPerConnection,
      },
    ];
    const rows = [
      '| request | req/s | ratio to /health | p50 ms | p99 ms | errors |',
      '|---|---:|---:|---:|---:|---:|',
    ];
    let baseline = 0;
    for (const c of cases) {
      const options = {
        url: c.url,
        headers: c.headers ?? {},
        connections,
        ...(c.setupClient ? { setupClient: c.setupClient } : {}),
      };
      await autocannon({ ...options, duration: 2 }); // warm-up
      const result = await autocannon({ ...options, duration: seconds });
      baseline ||= result.requests.average;
      rows.push(
        `| ${c.label} | ${Math.round(result.requests.average)} | ${(result.requests.average / baseline).toFixed(2)} | ` +
          `${result.latency.p50} | ${result.latency.p99} | ${result.errors + result.non2xx} |`,
      );
    }
    return `${connections} connections, ${seconds} s per case\n\n${rows.join('\n')}`;
  } finally {
    await web.stop();
  }
}
