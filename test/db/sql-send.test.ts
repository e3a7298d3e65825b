/**
 * A job sent from SQL (db/jobs/sql-send.ts) is the job pg-boss's own send() makes: every column the
 * same but its id and creation time, for a kind that starts at once and one scheduled for later.
 */
import test from 'ava';
import { fromKnex } from 'pg-boss';
import { HOLD_EXPIRE, JOB_KINDS, type JobKind } from '../../db/jobs/kinds.ts';
import { sendFunctionOf } from '../../db/jobs/sql-send.ts';
import { useTestDatabase } from '../helpers/database.ts';

const database = useTestDatabase(test);

/** Columns that differ between any two jobs by construction. */
const OWN_COLUMNS = ['id', 'created_on'];

test('only the kinds that SQL sends have a send function', async (t) => {
  const { rows } = await database().db.raw<{ rows: { name: string }[] }>(
    "select proname as name from pg_proc where proname like 'send\\_job\\_%' order by 1",
  );
  t.deepEqual(
    rows.map((r) => r.name),
    JOB_KINDS.filter((k) => k.sentFromSql).map(sendFunctionOf),
  );
});

for (const [kind, startAfter] of [
  [HOLD_EXPIRE, undefined],
  [HOLD_EXPIRE, new Date(Date.now() + 15 * 60_000)],
] as [JobKind, Date | undefined][]) {
  test(`${kind.name}${startAfter ? ', scheduled,' : ''} sent from SQL is the job send() makes`, async (t) => {
    const { db, boss } = database();
    const data = { marker: `${kind.name}-${startAfter ? 'later' : 'now'}` };
    const viaBoss = await db.transaction(
      async (trx) =>
        (await boss.send(kind.name, data, {
          expireInSeconds: kind.expireInSeconds as number,
          ...(startAfter ? { startAfter } : {}),
          db: fromKnex(trx),
        }))!,
    );
    const { rows } = await db.raw<{ rows: { id: string }[] }>(
      `select s as id from ${sendFunctionOf(kind)}(?::jsonb, ?) s`,
      [JSON.stringify(data), startAfter ?? null],
    );
    t.is(rows.length, 1);
    const jobs = await db('pgboss.job').whereIn('id', [viaBoss, rows[0]!.id]);
    const [a, b] = jobs.map((job: Record<string, unknown>) =>
      Object.fromEntries(Object.entries(job).filter(([column]) => !OWN_COLUMNS.includes(column))),
    );
    t.truthy(a && b);
    // Two statements a few milliseconds apart: times computed from now() may differ by that much.
    for (const column of ['start_after', 'keep_until']) {
      const gap = Math.abs((a![column] as Date).getTime() - (b![column] as Date).getTime());
      t.true(gap < 5_000, `${column} differs by ${gap} ms`);
      delete a![column];
      delete b![column];
    }
    t.deepEqual(a, b);
    t.is(a!.expire_seconds, kind.expireInSeconds);
    if (startAfter) {
      const job = jobs.find((j: { id: string }) => j.id === rows[0]!.id) as { start_after: Date };
      t.is(job.start_after.getTime(), startAfter.getTime());
    }
  });
}
