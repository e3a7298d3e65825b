/**
 * `npm run bench`: measures the API as a partner sees it. It builds a fresh database (on
 * DATABASE_URL's server, or an embedded PostgreSQL), seeds the demo data with a rate limit high
 * enough not to interfere, starts `npm run web` as its own process, and drives it with autocannon
 * from this process, so server and load generator sit side by side as they would on one machine.
 * Prints a markdown table for docs/BENCHMARKS.md. Options: BENCH_SECONDS (default 10),
 * BENCH_CONNECTIONS (default 16).
 */
import autocannon from 'autocannon';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { createServer } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { seedDemo } from '../../db/cli/demo-seed.ts';
import { loadConfigOrExit } from '../../db/config.ts';
import { dropDatabase, ensureDatabase, withDatabase } from '../../db/database-url.ts';
import { createDb } from '../../db/knex.ts';
import { createLogger } from '../../db/log.ts';
import { migrate } from '../../db/migrate.ts';
import { postgresServer } from '../helpers/postgres-server.ts';
import * as partners from '../../db/queries/partners.ts';
import * as grants from '../../db/queries/venue-grants.ts';
import { issueKey } from '../../db/cli/partner-commands.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const seconds = Number(process.env.BENCH_SECONDS ?? 10);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 16);
const config = loadConfigOrExit();
const log = createLogger('warn');

const server = await postgresServer(config.databaseUrl, 'bench-pg', log);
const { adminUrl } = server;
const name = `booking_bench_${randomBytes(4).toString('hex')}`;
await ensureDatabase(adminUrl, name);
const url = withDatabase(adminUrl, name);

try {
  await migrate(url, log);
  const db = createDb(url, { poolMax: 1 });
  const seed = await db.transaction((trx) => seedDemo(trx));
  await partners.setRateLimit(db, seed.partner_id, 1_000_000);
  // Real traffic comes from many partners: one key per connection for the "many keys" cases.
  const keys: string[] = [];
  for (let i = 0; i < connections; i++) {
    const partnerId = await partners.insert(db, { name: `Bench ${i}`, rateLimit: 1_000_000 });
    await grants.grant(db, partnerId, seed.venue_id);
    keys.push(await issueKey(db, partnerId));
  }
  await db.destroy();

  const port = await freePort();
  const web = spawn(process.execPath, ['api/main.ts'], {
    cwd: root,
    env: { ...process.env, DATABASE_URL: url, PORT: String(port), LOG_LEVEL: 'warn' },
    stdio: 'inherit',
  });
  try {
    await waitForHealth(`http://127.0.0.1:${port}/health`);
    const base = `http://127.0.0.1:${port}`;
    const headers = { 'x-api-key': seed.api_key };
    const venues = `${base}/api/v1/partner/venues`;
    const resources = `${venues}/${seed.venue_id}/resources`;
    let next = 0;
    const keyPerConnection = (client: autocannon.Client) => {
      client.setHeaders({ 'x-api-key': keys[next++ % keys.length]! });
    };
    const cases: BenchCase[] = [
      { label: 'GET /health (no key, one `select 1`)', url: `${base}/health`, headers: {} },
      { label: 'GET /partner/venues, one key for all connections', url: venues, headers },
      { label: 'GET /partner/venues, one key per connection', url: venues, setupClient: keyPerConnection },
      {
        label: 'GET /partner/venues/{id}/resources, one key per connection',
        url: resources,
        setupClient: keyPerConnection,
      },
    ];
    const rows: string[] = [];
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
      const errors = result.errors + result.non2xx;
      baseline ||= result.requests.average;
      rows.push(
        `| ${c.label} | ${Math.round(result.requests.average)} | ${(result.requests.average / baseline).toFixed(2)} | ` +
          `${result.latency.p50} | ${result.latency.p99} | ${errors} |`,
      );
    }
    console.log(
      `\n${connections} connections, ${seconds} s per case, server and load generator on one machine\n`,
    );
    console.log('| request | req/s | ratio to /health | p50 ms | p99 ms | errors |');
    console.log('|---|---:|---:|---:|---:|---:|');
    for (const row of rows) console.log(row);
  } finally {
    web.kill('SIGTERM');
    await once(web, 'exit');
  }
} finally {
  await dropDatabase(adminUrl, name);
  await server.stop();
}

interface BenchCase {
  label: string;
  url: string;
  headers?: Record<string, string>;
  setupClient?: (client: autocannon.Client) => void;
}

async function waitForHealth(healthUrl: string): Promise<void> {
  for (let i = 0; i < 100; i++) {
    if (
      await fetch(healthUrl).then(
        (r) => r.ok,
        () => false,
      )
    )
      return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('the web process did not become healthy');
}

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const probe = createServer().listen(0, '127.0.0.1', () => {
      const address = probe.address();
      probe.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}
