/**
 * The API's slot ids (db/rules/slot-id.ts) are the ids `slot_id()` gives holds in SQL: the same for
 * any resource and any start, including starts before 1970, across a change of the clocks, and at
 * the far ends of what a timestamp can hold.
 */
import test from 'ava';
import { randomUUID } from 'node:crypto';
import { slotId } from '../../db/rules/slot-id.ts';
import { useTestDatabase } from '../helpers/database.ts';

const database = useTestDatabase(test);

const STARTS = [
  Date.UTC(2026, 10, 23, 0, 30),
  Date.UTC(2026, 2, 29, 1, 0), // the instant Europe's clocks went forward in 2026
  Date.UTC(2026, 9, 25, 1, 0), // and back
  0,
  -1_800_000,
  Date.UTC(1, 0, 1),
  Date.UTC(9999, 11, 31, 23, 30),
  1_764_000_000_001,
];

test('slotId() in JavaScript is slot_id() in SQL', async (t) => {
  const { db } = database();
  const pairs = [
    ...STARTS.map((start) => ({ resource: randomUUID(), start })),
    ...Array.from({ length: 500 }, (_, i) => ({
      resource: randomUUID(),
      start: Date.UTC(2026, 0, 1) + Math.floor(Math.random() * 3 * 365 * 48) * 1_800_000 + (i % 2) * 900_000,
    })),
  ];
  const { rows } = await db.raw<{ rows: { id: string }[] }>(
    `select slot_id(p.resource, to_timestamp(p.start / 1000.0)) as id
       from unnest(?::uuid[], ?::bigint[]) with ordinality as p(resource, start, n) order by p.n`,
    [pairs.map((p) => p.resource), pairs.map((p) => p.start)],
  );
  t.deepEqual(
    pairs.map((p) => slotId(p.resource, p.start)),
    rows.map((r) => r.id),
  );
});
