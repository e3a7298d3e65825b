/**
 * One way to record events: `record_event()` and `record_events()` (db/functions/record_event.sql,
 * one event or a set), which the hold, booking and waitlist recorders call, are the only code that
 * writes to `events`, in SQL or TypeScript. (That every recorded event is published — the deliveries its subscribers were owed,
 * each on its way — is checked after every test file, in test/helpers/database.ts.)
 */
import test from 'ava';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { ROOT } from '../helpers/processes.ts';

test('nothing but db/functions/record_event.sql writes to events', async (t) => {
  const writers: string[] = [];
  for (const room of ['api', 'db', 'workers']) {
    for (const file of await sources(path.join(ROOT, room))) {
      const text = await readFile(file, 'utf8');
      if (/insert\s+into\s+events\b/i.test(text)) writers.push(path.relative(ROOT, file));
    }
  }
  t.deepEqual(writers, ['db/functions/record_event.sql']);
});

/** The service's TypeScript and SQL, but its migrations (which record no event) and the schema dump. */
async function sources(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true });
  return entries
    .filter((e) => e.isFile() && /\.(ts|sql)$/.test(e.name) && e.name !== 'schema.sql')
    .filter((e) => !e.parentPath.includes('migrations'))
    .map((e) => path.join(e.parentPath, e.name));
}
