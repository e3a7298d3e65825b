/**
 * The event recorder (db/rules/events.ts) is the one way to record an event, and cannot be used
 * half-way: a statement given event SQL must report what it recorded, and nothing else in the
 * service writes to `events`. (That every recorded event is published — the deliveries its
 * subscribers were owed, each with its job — is checked after every test file, in
 * test/helpers/database.ts.)
 */
import test from 'ava';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { recordEvents } from '../../db/rules/events.ts';
import { useTestDatabase } from '../helpers/database.ts';
import { ROOT } from '../helpers/processes.ts';

const database = useTestDatabase(test);

test('event SQL taken and not reported is refused, and its transaction rolls back', async (t) => {
  const { db } = database();
  await t.throwsAsync(
    db.transaction((trx) =>
      recordEvents(trx, (events) => {
        events.waitlistPromotedEvents('w');
        return Promise.resolve();
      }),
    ),
    { message: /recorded events without reporting them/ },
  );
  await t.throwsAsync(
    db.transaction((trx) =>
      recordEvents(trx, (events) => {
        events.recorded(['00000000-0000-0000-0000-000000000000']);
        return Promise.resolve();
      }),
    ),
    { message: /no statement was given SQL/ },
  );
});

test('nothing but the recorder writes to events', async (t) => {
  const writers: string[] = [];
  for (const room of ['api', 'db', 'workers']) {
    for (const file of await sources(path.join(ROOT, room))) {
      const text = await readFile(file, 'utf8');
      if (/insert\s+into\s+events\b/i.test(text)) writers.push(path.relative(ROOT, file));
    }
  }
  t.deepEqual(writers, ['db/rules/events.ts']);
});

async function sources(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true });
  return entries
    .filter((e) => e.isFile() && e.name.endsWith('.ts') && !e.parentPath.includes('migrations'))
    .map((e) => path.join(e.parentPath, e.name));
}
