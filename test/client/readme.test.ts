/**
 * The client's README, run as a partner would run it: its TypeScript snippets are written out as
 * files in a folder of this checkout (so `@partner-booking/client` resolves to the workspace
 * package, built by `npm test`), type-checked with the repository's strict settings, and run
 * with Node against a test server: hold-and-confirm.ts books a slot; group-hold.ts books two
 * courts as one group; receiver.ts receives a real delivery through real workers, verifies it, and
 * prints the booking.
 */
import test, { type ExecutionContext } from 'ava';
import { execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { startWorkers } from '../../workers/main.ts';
import { makeBookingWorld } from '../helpers/booking.ts';
import { testConfig, useTestDatabase } from '../helpers/database.ts';
import { useTestServer } from '../helpers/http.ts';
import { ROOT } from '../helpers/processes.ts';
import { waitFor } from '../helpers/wait.ts';
import { subscribe } from '../helpers/webhooks.ts';

const database = useTestDatabase(test);
const server = useTestServer(test, database);
const run = promisify(execFile);

/** The README's ```ts blocks, by the file name each names in its first line. */
async function snippets(): Promise<Map<string, string>> {
  const readme = await readFile(path.join(ROOT, 'client', 'README.md'), 'utf8');
  const blocks = [...readme.matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => m[1]!);
  return new Map(blocks.map((code) => [/^\/\/ (\S+\.ts)/.exec(code)![1]!, code]));
}

async function folderWith(t: ExecutionContext, files: Map<string, string>): Promise<string> {
  const dir = await mkdtemp(path.join(ROOT, 'client', '.readme-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  for (const [name, code] of files) await writeFile(path.join(dir, name), code);
  await writeFile(
    path.join(dir, 'tsconfig.json'),
    JSON.stringify({ extends: '../../tsconfig.json', include: ['*.ts'] }),
  );
  return dir;
}

test.serial(
  'the README snippets type-check and run: hold → confirm books, a group books two courts, the receiver verifies a real delivery',
  async (t) => {
    const files = await snippets();
    t.deepEqual([...files.keys()].sort(), ['group-hold.ts', 'hold-and-confirm.ts', 'receiver.ts']);
    const dir = await folderWith(t, files);
    const tsc = await run(process.execPath, [
      path.join(ROOT, 'node_modules/typescript/bin/tsc'),
      '-p',
      dir,
    ]).catch((err: { stdout: string }) => err);
    t.is(tsc.stdout, '', 'the snippets type-check');

    const { db, url, log } = database();
    const workers = await startWorkers(testConfig({ DATABASE_URL: url }), url, log);
    t.teardown(() => workers.stop());
    const w = await makeBookingWorld(db);

    // The receiver, subscribed with the secret as subscribe returned it.
    const port = 20_000 + Math.floor(Math.random() * 20_000);
    const sub = await subscribe(server(), w.apiKey, `http://127.0.0.1:${port}/`, ['booking_created']);
    const receiver = spawn(process.execPath, ['receiver.ts'], {
      cwd: dir,
      env: { ...process.env, WEBHOOK_SECRET: sub.secret, PORT: String(port) },
    });
    t.teardown(() => receiver.kill());
    let received = '';
    receiver.stdout.on('data', (chunk: Buffer) => (received += chunk.toString()));
    receiver.stderr.on('data', (chunk: Buffer) => (received += chunk.toString()));
    await waitFor(
      async () => (await fetch(`http://127.0.0.1:${port}/`, { method: 'POST' }).catch(() => null)) !== null,
    );

    const booked = await run(process.execPath, ['hold-and-confirm.ts'], {
      cwd: dir,
      env: {
        ...process.env,
        BOOKING_URL: server().url,
        BOOKING_KEY: w.apiKey,
        VENUE_ID: w.venueId,
        RESOURCE_ID: w.court,
      },
    });
    const booking = JSON.parse(booked.stdout) as { booking_id: string; status: string };
    t.is(booking.status, 'BOOKED');
    t.truthy(await db('bookings').where({ id: booking.booking_id, partner_id: w.partnerId }).first());

    const grouped = await run(process.execPath, ['group-hold.ts'], {
      cwd: dir,
      env: {
        ...process.env,
        BOOKING_URL: server().url,
        BOOKING_KEY: w.apiKey,
        VENUE_ID: w.venueId,
        COURT_IDS: `${w.court},${w.halfA}`,
      },
    });
    const group = JSON.parse(grouped.stdout) as {
      hold_group_id: string;
      status: string;
      bookings: unknown[];
    };
    t.is(group.status, 'CONFIRMED');
    t.deepEqual(
      (await db('bookings').where({ hold_group_id: group.hold_group_id }).orderBy('resource_id')).map(
        (b) => b.resource_id,
      ),
      [w.court, w.halfA].sort(),
    );

    await waitFor(() => received.includes(`booked ${booking.booking_id} `), { timeout: 20_000 });
    t.regex(received, new RegExp(`^booked ${booking.booking_id} \\d{4}-\\d\\d-\\d\\dT`, 'm'));
    receiver.kill();
    await once(receiver, 'exit');
  },
);
