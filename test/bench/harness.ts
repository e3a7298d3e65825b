/**
 * What every benchmark shares: a fresh migrated database on the bench server, partners with keys
 * and a rate limit that never interferes, `npm run web` and `npm run worker` child processes, and
 * percentile maths.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { openSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { Pool } from 'undici';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { issueKey } from '../../db/cli/partner-commands.ts';
import { dropDatabase, ensureDatabase, withDatabase } from '../../db/postgres/database-url.ts';
import { createDb, type Knex } from '../../db/postgres/knex.ts';
import type { Logger } from '../../db/platform/log.ts';
import { migrate } from '../../db/schema/migrate.ts';
import * as partners from '../../db/queries/partners.ts';
import * as resources from '../../db/queries/resources.ts';
import * as venues from '../../db/queries/venues.ts';
import * as grants from '../../db/queries/venue-grants.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** A fresh database for one benchmark, dropped afterwards. */
export async function withBenchDatabase<T>(
  adminUrl: string,
  log: Logger,
  run: (url: string, db: Knex) => Promise<T>,
): Promise<T> {
  const name = `booking_bench_${randomBytes(4).toString('hex')}`;
  await ensureDatabase(adminUrl, name);
  const url = withDatabase(adminUrl, name);
  const db = createDb(url, { poolMax: 4 });
  try {
    await migrate(url, log);
    return await run(url, db);
  } finally {
    await db.destroy();
    await dropDatabase(adminUrl, name);
  }
}

/** `count` partners granted `venueId`, each with a key and a limit that never interferes. */
export async function benchPartners(
  db: Knex,
  venueId: string,
  count: number,
): Promise<{ partnerId: string; apiKey: string }[]> {
  const out = [];
  for (let i = 0; i < count; i++) {
    const partnerId = await partners.insert(db, { name: `Bench ${i}`, rateLimit: 1_000_000 });
    await grants.grant(db, partnerId, venueId);
    out.push({ partnerId, apiKey: await issueKey(db, partnerId) });
  }
  return out;
}

/** The resource every bench court is: one hour, 06:00 to 22:00, ₹500. */
export const BENCH_COURT = {
  resourceType: 'court',
  sportCategory: 'badminton',
  durationMinutes: 60,
  priceRupees: 500,
  opensAt: '06:00',
  closesAt: '22:00',
  closedOn: [],
};

/** A venue of `courts` bench courts (300 by default), granted to nobody yet. */
export async function benchVenue(
  db: Knex,
  name: string,
  { holdSeconds = 900, courts = 300 }: { holdSeconds?: number; courts?: number } = {},
): Promise<string> {
  const venueId = await venues.insert(db, {
    name,
    address: '1 Bench Road',
    city: 'Pune',
    timezone: 'Asia/Kolkata',
    holdSeconds,
    minLeadMinutes: 0,
    maxAdvanceDays: 21,
  });
  await db.transaction(async (trx) => {
    for (let i = 0; i < courts; i++) await resources.insert(trx, { ...BENCH_COURT, venueId, parts: [] });
  });
  return venueId;
}

/** A bookable slot of a bench venue. */
export interface Slot {
  resource_id: string;
  slot_start: Date;
}

/** Hands out the venue's slots of the next 20 days, each once, in order: never a contended cycle. */
export async function slotSupply(db: Knex, venueId: string): Promise<() => Slot> {
  const { rows: slots } = await db.raw<{ rows: Slot[] }>(
    `select s.resource_id, s.slot_start from venues v,
       generate_series(1, 20) d,
       lateral venue_slots(v.id, (now() at time zone v.timezone)::date + d) s
     where v.id = ? order by d, s.slot_start, s.resource_id`,
    [venueId],
  );
  let next = 0;
  return () => {
    const slot = slots[next++];
    if (!slot) throw new Error('out of slots: lower BENCH_SECONDS');
    return slot;
  };
}

/** A hold request's body for `slot` (one hour, a fresh idempotency key). */
export function holdBody(venueId: string, slot: Slot) {
  return {
    venue_id: venueId,
    resource_id: slot.resource_id,
    slot_start: slot.slot_start.toISOString(),
    slot_duration_minutes: 60,
    idempotency_key: randomUUID(),
  };
}

/**
 * POSTs to `npm run web`'s API as one key over `connections` keep-alive connections, as the shared
 * load harness drives it: each answer's JSON, or a throw unless it is 201.
 */
export function apiClient(base: string, apiKey: string, connections: number) {
  const pool = new Pool(base, { connections, pipelining: 1 });
  return {
    post: async (route: string, body: unknown): Promise<Record<string, string>> => {
      const res = await pool.request({
        method: 'POST',
        path: `/api/v1${route}`,
        headers: { 'x-api-key': apiKey, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      const json = (await res.body.json()) as Record<string, string>;
      if (res.statusCode !== 201) throw new Error(`${route} answered ${res.statusCode} ${json.error}`);
      return json;
    },
    close: () => pool.close(),
  };
}

/** A confirm request's body for `holdId` (a fresh idempotency key). */
export function confirmBody(holdId: string) {
  return {
    hold_id: holdId,
    payment_reference: 'bench',
    customer_name: 'Bench Customer',
    customer_phone: '9812345678',
    idempotency_key: randomUUID(),
  };
}

/**
 * The node arguments (options, then entry point) of a package.json script, so that a bench starts a
 * process exactly as `npm run <script>` does (its heap flags, its tracing preload) and measures what
 * runs, with no second copy of the flags to keep in step.
 */
export async function scriptArguments(script: 'web' | 'worker'): Promise<string[]> {
  const pkg = JSON.parse(await readFile(path.join(root, 'package.json'), 'utf8')) as {
    scripts: Record<string, string>;
  };
  // `exec node …`: the shell npm starts becomes node, so npm's signals reach it.
  const [node, ...args] = pkg.scripts[script]!.trim()
    .replace(/^exec\s+/, '')
    .split(/\s+/);
  if (node !== 'node' || args.length === 0)
    throw new Error(`unexpected ${script} script: ${pkg.scripts[script]}`);
  return args;
}

/** `npm run web` as its own process on a free port. */
export async function startWebProcess(
  url: string,
  {
    logLevel = 'warn',
    logFile,
    entry,
    env = {},
  }: {
    logLevel?: string;
    logFile?: string;
    /** Another entry point, started with the web script's node options (edge-floor-app.ts). */
    entry?: string;
    /** More environment for the process. */
    env?: Record<string, string>;
  } = {},
): Promise<{ base: string; pid: number; stop(): Promise<void> }> {
  const port = await freePort();
  // BENCH_PROFILE=dir writes a CPU profile of the web process there (open it in Chrome DevTools).
  const profile = process.env.BENCH_PROFILE
    ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_PROFILE}`]
    : [];
  const args = await scriptArguments('web');
  const web = spawn(process.execPath, [...args.slice(0, -1), ...profile, entry ?? args.at(-1)!], {
    cwd: root,
    env: { ...process.env, ...env, DATABASE_URL: url, PORT: String(port), LOG_LEVEL: logLevel },
    stdio: ['ignore', logFile ? openSync(logFile, 'a') : 'inherit', 'inherit'],
  });
  const base = `http://127.0.0.1:${port}`;
  for (let i = 0; ; i++) {
    if (
      await fetch(`${base}/health`).then(
        (r) => r.ok,
        () => false,
      )
    )
      break;
    if (i > 200) throw new Error('the web process did not become healthy');
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    base,
    pid: web.pid!,
    async stop() {
      web.kill('SIGTERM');
      await once(web, 'exit');
    },
  };
}

/** `npm run worker` as its own process, once it has started its workers. */
export async function startWorker(url: string): Promise<ChildProcess> {
  const child = spawn(process.execPath, await scriptArguments('worker'), {
    cwd: root,
    env: { ...process.env, DATABASE_URL: url, LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  while (!output.includes('"workers started"')) {
    if (child.exitCode !== null) throw new Error('worker exited');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  child.stdout.resume();
  return child;
}

/** SIGTERM, then waits for the exit. */
export async function stopProcess(child: ChildProcess): Promise<void> {
  child.kill('SIGTERM');
  if (child.exitCode === null) await once(child, 'exit');
}

/** The p-th percentile (0–100) of `values`, in the values' unit, to two decimals. */
export function percentile(values: number[], p: number): number {
  if (!values.length) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const index = Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1);
  return Math.round(sorted[Math.max(0, index)]! * 100) / 100;
}

/** Milliseconds since `start` (a process.hrtime.bigint()). */
export function msSince(start: bigint): number {
  return Number(process.hrtime.bigint() - start) / 1e6;
}

/** Clock ticks per second of /proc's CPU times (USER_HZ: 100 on Linux). */
const TICKS = 100;

/** CPU seconds a process has used so far (user + system), from /proc; 0 once it is gone. */
async function processCpu(pid: number | string): Promise<number> {
  const { user, system } = await processCpuSplit(pid);
  return user + system;
}

/**
 * CPU seconds a process (with its waited-for children) has used so far in user and in kernel
 * mode, from /proc; zeros once it is gone. Linux only.
 */
export async function processCpuSplit(pid: number | string): Promise<{ user: number; system: number }> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '');
  // Fields after the command (which may hold spaces, so split after its closing parenthesis):
  // utime, stime, cutime and cstime are the 14th to 17th fields of the line.
  const fields = stat
    .slice(stat.lastIndexOf(')') + 2)
    .split(' ')
    .map(Number);
  if (fields.length <= 14) return { user: 0, system: 0 };
  return { user: (fields[11]! + fields[13]!) / TICKS, system: (fields[12]! + fields[14]!) / TICKS };
}

/**
 * CPU seconds used so far by the web process and by every PostgreSQL process of this machine
 * (backends included; a bench's database server has nothing else to do): read before and after a
 * run, the difference is the server's cost of the run. Linux only; NaN elsewhere.
 */
export async function serverCpuSeconds(webPid: number): Promise<{ web: number; postgres: number }> {
  const pids = await readdir('/proc').catch(() => null);
  if (!pids) return { web: NaN, postgres: NaN };
  let postgres = 0;
  for (const pid of pids.filter((p) => /^\d+$/.test(p))) {
    const comm = await readFile(`/proc/${pid}/comm`, 'utf8').catch(() => '');
    if (comm.trim() === 'postgres') postgres += await processCpu(pid);
  }
  return { web: await processCpu(webPid), postgres };
}

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const probe = createServer().listen(0, '127.0.0.1', () => {
      const address = probe.address();
      probe.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}
