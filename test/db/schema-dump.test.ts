/**
 * db/schema.sql is what the migrations build (CI runs this on PostgreSQL 15 and 17, so the dump is
 * also the same on both), and each migration's down undoes exactly what its up did.
 */
import test from 'ava';
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { MIGRATIONS } from '../../db/schema/sources.ts';
import { dropDatabase, ensureDatabase, withDatabase } from '../../db/postgres/database-url.ts';
import { createDb } from '../../db/postgres/knex.ts';
import { dumpSchema, SCHEMA_FILE } from '../../db/schema/dump.ts';
import { useTestDatabase } from '../helpers/database.ts';

const database = useTestDatabase(test);

/** How many differing lines of each side the failure message shows. */
const EXCERPT_LINES = 12;

test('db/schema.sql is the schema the migrations build', async (t) => {
  const built = await dumpSchema(database().url);
  const committed = await readFile(SCHEMA_FILE, 'utf8').catch(() => '');
  if (built === committed) t.pass();
  else t.fail(`db/schema.sql is stale: run npm run db:dump\n${diffExcerpt(committed, built)}`);
});

test("each migration's down restores the schema its up found", async (t) => {
  const adminUrl = database().adminUrl;
  const name = `bt_dump_${randomBytes(4).toString('hex')}`;
  await ensureDatabase(adminUrl, name);
  const url = withDatabase(adminUrl, name);
  const db = createDb(url, { poolMax: 1 });
  try {
    // The foundation's down (shipped, so it stays as it is) leaves btree_gist installed; with the
    // extension there from the start, that is no difference.
    await db.raw('create extension btree_gist');
    const before: string[] = [];
    for (;;) {
      const [, pending] = (await db.migrate.list(MIGRATIONS)) as [unknown[], { file: string }[]];
      if (!pending[0]) break;
      before.push(await dumpSchema(url));
      await db.migrate.up(MIGRATIONS);
    }
    t.true(before.length > 0);
    for (let step = before.length - 1; step >= 0; step--) {
      const [, undone] = (await db.migrate.down(MIGRATIONS)) as [number, string[]];
      const after = await dumpSchema(url);
      if (after !== before[step])
        t.fail(`down of ${undone.join(', ')}:\n${diffExcerpt(before[step]!, after)}`);
    }
  } finally {
    await db.destroy();
    await dropDatabase(adminUrl, name);
  }
});

/** The first stretch of lines where `actual` departs from `expected`, as - and + lines with context. */
function diffExcerpt(expected: string, actual: string): string {
  const a = expected.split('\n');
  const b = actual.split('\n');
  let top = 0;
  while (top < a.length && top < b.length && a[top] === b[top]) top++;
  let tail = 0;
  while (
    tail < a.length - top &&
    tail < b.length - top &&
    a[a.length - 1 - tail] === b[b.length - 1 - tail]
  ) {
    tail++;
  }
  const side = (lines: string[], mark: string) => [
    ...lines.slice(0, EXCERPT_LINES).map((line) => `${mark} ${line}`),
    ...(lines.length > EXCERPT_LINES ? [`${mark} … ${lines.length - EXCERPT_LINES} more lines`] : []),
  ];
  return [
    `@@ line ${top + 1} @@`,
    ...a.slice(Math.max(0, top - 2), top).map((line) => `  ${line}`),
    ...side(a.slice(top, a.length - tail), '-'),
    ...side(b.slice(top, b.length - tail), '+'),
  ].join('\n');
}
