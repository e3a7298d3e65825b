/**
 * The README's quick start and the partner guide's hold-group walk-through, pasted as a newcomer
 * would: each shell block run with bash (and curl, jq, npm) as written, against a test server and
 * its database, with `API` pointing there. Every answer it prints is what it says (a success, or
 * the one refusal it shows), and the database then holds what the walk-through says it made.
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

/** The first shell block under `heading` in a Markdown file of the repository. */
async function shellBlock(file: string, heading: string): Promise<string> {
  const text = await readFile(path.join(ROOT, file), 'utf8');
  const section = text.slice(text.indexOf(heading));
  return /```sh\n([\s\S]*?)```/.exec(section)![1]!;
}

/** Runs a walk-through with bash against the test server; every JSON answer it printed, in order. */
async function walkThrough(script: string): Promise<Record<string, unknown>[]> {
  const { stdout, stderr } = await promisify(execFile)('bash', ['-e', '-o', 'pipefail', '-c', script], {
    cwd: ROOT,
    env: { ...process.env, API: `${server().url}/api/v1`, DATABASE_URL: database().url },
  });
  return `${stdout}\n${stderr}`
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

const runnable = hasJq || process.env.REQUIRE_QUICKSTART_TEST === '1' ? test.serial : test.skip;

runnable(
  "the README's quick start runs as written: a booking cancelled and refunded, a hold released, one paid by a credit",
  async (t) => {
    const answers = await walkThrough(await shellBlock('README.md', '## Quick start'));
    t.true(answers.length >= 10, JSON.stringify(answers));
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

runnable(
  "the partner guide's hold groups run as written: a court and the full pitch booked as one, a half refused, a basket released",
  async (t) => {
    const { db } = database();
    const before = await db('hold_groups').pluck('id');
    const answers = await walkThrough(await shellBlock('docs/PARTNER-GUIDE.md', '### Hold groups'));
    t.deepEqual(
      answers.filter((a) => 'error' in a).map((a) => [a.error, a.details]),
      [
        [
          'TRANSFORMATION_CONFLICT',
          [
            {
              field: 'items.1',
              in: 'body',
              reason: 'TRANSFORMATION_CONFLICT',
              message: (answers.find((a) => 'error' in a)!.details as { message: string }[])[0]!.message,
            },
          ],
        ],
      ],
      'the one refusal the guide shows, and no other',
    );
    const groups = await db('hold_groups').whereNotIn('id', before).orderBy('created_at');
    t.deepEqual(
      groups.map((g) => [g.status, g.price_rupees]),
      [
        ['CONFIRMED', 2700],
        ['CANCELLED', 1700],
      ],
    );
    const bookings = await db('bookings').where({ hold_group_id: groups[0].id });
    t.is(bookings.length, 2);
    t.true(bookings.every((b) => b.payment_reference === 'upi-000124'));
    const read = answers.find(
      (a) => a.hold_group_id === groups[0].id && Array.isArray(a.holds) && a.status === 'CONFIRMED',
    );
    t.deepEqual(
      (read!.holds as { status: string }[]).map((h) => h.status),
      ['BOOKED', 'BOOKED'],
    );
  },
);

runnable(
  "the partner guide's league night runs as written: ten weeks previewed, one taken and skipped, confirmed, cancelled from week six",
  async (t) => {
    const { db } = database();
    const before = await db('series').pluck('id');
    const answers = await walkThrough(await shellBlock('docs/PARTNER-GUIDE.md', '### Recurring series'));
    t.deepEqual(
      answers.filter((a) => 'error' in a),
      [],
      'no answer is an error',
    );
    const previews = answers.filter((a) => a.timezone && !a.series_id);
    t.deepEqual(
      (previews.at(-1)!.occurrences as { status: string; reason: string | null }[]).map((o) => o.reason),
      [null, 'TAKEN', null, null, null, null, null, null, null, null],
    );
    const [series] = await db('series').whereNotIn('id', before);
    const read = answers.findLast((a) => a.series_id === series.id)!;
    t.deepEqual(
      (read.occurrences as { status: string }[]).map((o) => o.status),
      [
        'BOOKED',
        'SKIPPED',
        'BOOKED',
        'BOOKED',
        'BOOKED',
        'CANCELLED',
        'CANCELLED',
        'CANCELLED',
        'CANCELLED',
        'CANCELLED',
      ],
    );
    t.is(Number((await db('bookings').where({ series_id: series.id }).count({ n: '*' }))[0]!.n), 9);
  },
);
