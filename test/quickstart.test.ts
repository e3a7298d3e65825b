/**
 * The README's quick start, pasted as a newcomer would: its shell block run with bash (and curl,
 * jq, npm) as written, against a test server and its database, with `API` pointing there. Every
 * answer it prints is a success, and the database then holds what the walk-through says it made.
 * Skipped, saying so, on a machine without jq unless REQUIRE_QUICKSTART_TEST=1 (`.ci/run`).
 */
import test from 'ava';
import { execFile, execFileSync } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { useTestDatabase } from './helpers/database.ts';
import { useTestServer } from './helpers/http.ts';
import { ROOT } from './helpers/processes.ts';

const database = useTestDatabase(test);
const server = useTestServer(test, database);

const hasJq = (() => {
  try {
    execFileSync('jq', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

/** The shell block of the README's "## Quick start" section. */
async function quickStart(): Promise<string> {
  const readme = await readFile(path.join(ROOT, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('## Quick start'));
  return /```sh\n([\s\S]*?)```/.exec(section)![1]!;
}

(hasJq || process.env.REQUIRE_QUICKSTART_TEST === '1' ? test : test.skip)(
  "the README's quick start runs as written: a booking cancelled and refunded, a hold released, one paid by a credit",
  async (t) => {
    const script = await quickStart();
    const { stdout, stderr } = await promisify(execFile)('bash', ['-e', '-o', 'pipefail', '-c', script], {
      cwd: ROOT,
      env: { ...process.env, API: `${server().url}/api/v1`, DATABASE_URL: database().url },
    });
    const answers = `${stdout}\n${stderr}`
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    t.true(answers.length >= 10, `${stdout}\n${stderr}`);
    t.deepEqual(
      answers.filter((a) => 'error' in a),
      [],
      'no answer is an error',
    );

    const { db } = database();
    const holds = await db('holds').orderBy('created_at').pluck('status');
    t.deepEqual(holds, ['CONFIRMED', 'CANCELLED', 'CONFIRMED']);
    const bookings = await db('bookings')
      .orderBy('booked_at')
      .select('status', 'payment_reference', db.raw('package_purchase_id is not null as by_credit'));
    t.deepEqual(bookings, [
      { status: 'REFUNDED', payment_reference: 'upi-000123', by_credit: false },
      { status: 'BOOKED', payment_reference: 'package', by_credit: true },
    ]);
    t.is((await db('package_purchases').first()).credits_remaining, 9);
  },
);
