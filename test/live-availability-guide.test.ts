/**
 * The partner guide's live availability client, run as written with the `eventsource` package
 * against a test server: it prints the snapshot, then each change as it happens (a hold, its
 * release), fetches again on an operator's range, and says so when access is revoked.
 */
import test from 'ava';
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import * as grants from '../db/queries/venue-grants.ts';
import { holdSlot, localDate, makeBookingWorld, releaseHold } from './helpers/booking.ts';
import { useTestDatabase } from './helpers/database.ts';
import { ops } from './helpers/feed.ts';
import { useTestServer } from './helpers/http.ts';
import { ROOT } from './helpers/processes.ts';
import { waitFor } from './helpers/wait.ts';

const database = useTestDatabase(test);
const server = useTestServer(test, database);

/** The first JavaScript block under `heading` in the partner guide. */
async function jsBlock(heading: string): Promise<string> {
  const text = await readFile(path.join(ROOT, 'docs/PARTNER-GUIDE.md'), 'utf8');
  return /```js\n([\s\S]*?)```/.exec(text.slice(text.indexOf(heading)))![1]!;
}

test('the guide’s eventsource client keeps a date current: snapshot, hold, release, a blackout, access revoked', async (t) => {
  const { db } = database();
  const w = await makeBookingWorld(db);
  const date = await localDate(db, w.venueId, 1);
  // Inside the checkout, so that `eventsource` resolves from its node_modules.
  const dir = path.join(ROOT, '.data', `guide-${randomUUID()}`);
  await mkdir(dir, { recursive: true });
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'live-availability.mjs');
  await writeFile(file, await jsBlock('### Live availability'));
  const child = spawn(process.execPath, [file], {
    env: { ...process.env, API: `${server().url}/api/v1`, KEY: w.apiKey, VENUE: w.venueId, DATE: date },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  t.teardown(() => child.kill());
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const lines = () => output.split('\n').filter(Boolean);
  const saw = (pattern: RegExp) => waitFor(() => lines().some((l) => pattern.test(l)), { timeout: 15_000 });

  await saw(/^snapshot: \d+ of \d+ slots free$/);
  const [first] = lines();
  // The stream is open once the service counts it; then a hold is listed as held, its release as free.
  await waitFor(
    async () =>
      Number(
        (await db('availability_streams').where({ partner_id: w.partnerId }).count({ n: '*' }))[0]!.n,
      ) === 1,
  );
  const held = await holdSlot(server(), w, { index: 4 });
  const start = held.slotStart.toISOString();
  await saw(new RegExp(`^${start} ${w.court}: held until ${held.response.body.hold_expiry_at as string}$`));
  await releaseHold(server(), w, held.holdId);
  await saw(new RegExp(`^${start} ${w.court}: free$`));
  // A blackout over the date: a range event, and the client takes a new snapshot, fewer slots free.
  const day = Date.parse(`${date}T00:00:00Z`);
  const iso = (ms: number) => new Date(ms).toISOString();
  await ops(
    db,
    'blackout:add',
    '--venue',
    w.venueId,
    '--from',
    iso(day - 86_400_000),
    '--to',
    iso(day + 2 * 86_400_000),
  );
  await waitFor(() => lines().filter((l) => l.startsWith('snapshot:')).length === 2, { timeout: 15_000 });
  t.not(lines().filter((l) => l.startsWith('snapshot:'))[1], first);
  await grants.revoke(db, w.partnerId, w.venueId);
  await saw(/^access revoked$/);
  t.false(/stream closed|Error/.test(output), output);
});
