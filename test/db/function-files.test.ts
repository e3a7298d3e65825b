/**
 * Every SQL function's current text is its file in db/functions/ (db/schema/sources.ts): the
 * database this suite migrated holds exactly the functions the files define, each with the body its
 * file gives (so what a reader opens is what runs), and the files are installed each after what it
 * requires.
 */
import test from 'ava';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { functionFiles } from '../../db/schema/sources.ts';
import { useTestDatabase } from '../helpers/database.ts';

const database = useTestDatabase(test);

test('every function in the database is one of the files, with the body its file gives', async (t) => {
  const files = functionFiles();
  const text = files.map((f) => f.sql).join('\n');
  const defined = new Set([...text.matchAll(/create or replace function (\w+)\s*\(/g)].map((m) => m[1]!));
  const { rows } = await database().db.raw<{ rows: { name: string; body: string }[] }>(
    `select p.proname as name, p.prosrc as body
       from pg_proc p join pg_namespace n on n.oid = p.pronamespace
      where n.nspname = 'public' and p.prokind = 'f'
        and not exists (select from pg_depend d where d.objid = p.oid and d.deptype = 'e')
        and p.proname not like 'send\\_job\\_%'`,
  );
  t.deepEqual([...new Set(rows.map((r) => r.name))].sort(), [...defined].sort(), 'the same functions');
  for (const { name, body } of rows) t.true(text.includes(body), `${name}: the body of its file`);
});

test('files are ordered after what they require; a missing file or a cycle is refused', async (t) => {
  const order = functionFiles().map((f) => f.name);
  for (const file of functionFiles()) {
    for (const required of file.requires) {
      t.true(order.indexOf(required) < order.indexOf(file.name), `${file.name} after ${required}`);
    }
  }
  const dir = await mkdtemp(path.join(tmpdir(), 'functions-'));
  const put = (name: string, requires: string) =>
    writeFile(path.join(dir, `${name}.sql`), `-- ${name}\n--\n-- requires: ${requires}\nselect 1;\n`);
  await put('a', 'b, c');
  await put('b', 'c');
  await writeFile(path.join(dir, 'c.sql'), 'select 1;\n');
  t.deepEqual(
    functionFiles(dir).map((f) => f.name),
    ['c', 'b', 'a'],
  );
  await put('c', 'a');
  t.throws(() => functionFiles(dir), { message: /a → b → c → a is a cycle/ });
  await put('c', 'nowhere');
  t.throws(() => functionFiles(dir), { message: /c\.sql requires nowhere, which has no file/ });
});
