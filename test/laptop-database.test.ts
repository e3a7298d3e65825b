/**
 * The laptop database is reachable (CONTRACT.md, "Reaching the laptop database"): `npm start` on
 * its embedded PostgreSQL prints the DATABASE_URL it uses, and `npm run ops` of the same checkout,
 * without DATABASE_URL, works on that database while start runs — the README's "lost the key? run
 * demo:seed" as written — and stops naming DATABASE_URL once start has stopped. In a copy of the
 * checkout, so its `.data/` is its own.
 */
import test from 'ava';
import { mkdtemp, realpath, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { relocatedDataRoot } from '../db/platform/embedded/root.ts';
import { inCheckout } from './helpers/ops.ts';
import { copyCheckout, startProcess } from './helpers/processes.ts';

test('npm start prints its DATABASE_URL, and ops of the same checkout uses that database while it runs', async (t) => {
  const checkout = await mkdtemp(path.join(os.tmpdir(), 'booking-laptop-'));
  await copyCheckout(checkout);
  const start = startProcess('start.ts', { DATABASE_URL: undefined }, checkout);
  try {
    const { port } = await start.logLine('web listening');
    const printed = /^ {2}DATABASE_URL=(postgres:\/\/\S+)$/m.exec(start.output())?.[1];
    t.truthy(printed, start.output());
    const client = new pg.Client({ connectionString: printed });
    await client.connect();
    const { rows } = await client.query<{ n: string }>('select count(*) as n from partners');
    await client.end();
    t.is(rows[0]!.n, '1', 'the printed URL is the database start seeded');

    const seeded = await inCheckout(checkout, { DATABASE_URL: undefined }, 'demo:seed');
    t.is(seeded.code, 0, seeded.stderr);
    const { api_key: apiKey } = JSON.parse(seeded.stdout) as { api_key: string };
    const venues = await fetch(`http://127.0.0.1:${port as number}/api/v1/partner/venues`, {
      headers: { 'x-api-key': apiKey },
    });
    t.is(venues.status, 200, 'the key ops made works against the running service');

    t.is(await start.stop(), 0, start.output());
    const after = await inCheckout(checkout, { DATABASE_URL: undefined }, 'demo:seed');
    t.is(after.code, 1);
    t.regex(
      after.stderr,
      /^invalid configuration: DATABASE_URL is required for this command \(.*npm start.*\)\n$/,
    );
  } finally {
    await start.stop();
    const data = await realpath(path.join(checkout, '.data')).catch(() => undefined);
    if (data) await rm(relocatedDataRoot(data), { recursive: true, force: true });
    await rm(checkout, { recursive: true, force: true });
  }
});
