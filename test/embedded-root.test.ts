/**
 * `npm start` as root in a checkout other users cannot enter. Most people who clone as root clone
 * into /root (mode 0700), and there the embedded PostgreSQL, which runs as the `postgres` user,
 * died with `spawn …/initdb EACCES`. The test reproduces that place with a `mktemp -d` folder
 * holding a hard-linked copy of this checkout (without .git and .data), then starts, checks and
 * stops `node start.ts` there twice. As any other user the problem cannot occur: skipped.
 */
import test from 'ava';
import { lstat, mkdtemp, realpath, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { relocatedDataRoot } from '../db/platform/embedded/root.ts';
import { copyCheckout, startProcess, type Started } from './helpers/processes.ts';

const asRoot = process.getuid?.() === 0;

/** `node start.ts` in `cwd` on the embedded PostgreSQL (no DATABASE_URL). */
const startIn = (cwd: string): Started => startProcess('start.ts', { DATABASE_URL: undefined }, cwd);

(asRoot ? test : test.skip)(
  'as root, npm start serves from a checkout the postgres user cannot enter, and keeps its data',
  async (t) => {
    const checkout = await mkdtemp(path.join(os.tmpdir(), 'booking-root-')); // mode 0700, as /root
    const started: Started[] = [];
    try {
      await copyCheckout(checkout);

      const first = startIn(checkout);
      started.push(first);
      const { port } = await first.logLine('web listening');
      const res = await fetch(`http://127.0.0.1:${port as number}/health`);
      t.is(res.status, 200, first.output());
      t.is(((await res.json()) as { status: string }).status, 'ok');
      t.true(
        (await lstat(path.join(checkout, '.data', 'pg'))).isSymbolicLink(),
        'the data is linked from .data/',
      );
      t.true(first.output().includes('"msg":"demo data seeded"'), first.output());
      t.is(await first.stop(), 0, first.output());

      const second = startIn(checkout);
      started.push(second);
      await second.logLine('web listening');
      t.is(await second.stop(), 0, second.output());
      t.notRegex(second.output(), /demo data seeded/i, 'the second start reuses the data');
    } finally {
      for (const run of started) await run.stop();
      const data = await realpath(path.join(checkout, '.data')).catch(() => undefined);
      if (data) await rm(relocatedDataRoot(data), { recursive: true, force: true });
      await rm(checkout, { recursive: true, force: true });
    }
  },
);
