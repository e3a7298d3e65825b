/**
 * availability.prune deletes the availability changes older than
 * AVAILABILITY_CHANGES_RETENTION_SECONDS and nothing younger, batch after batch, positions a change
 * not yet positioned before deleting it, remembers what it deleted per venue (a cursor before it
 * stays expired), and finds nothing the second time. The schedule is in place after migrate.
 */
import test from 'ava';
import { randomUUID } from 'node:crypto';
import { AVAILABILITY_PRUNE, AVAILABILITY_PRUNE_CRON } from '../../db/jobs/kinds.ts';
import { availabilityPrune, AVAILABILITY_PRUNE_BATCH } from '../../workers/availability-prune.ts';
import { holdSlot, localDate, makeBookingWorld } from '../helpers/booking.ts';
import { useTestDatabase } from '../helpers/database.ts';
import { poll, pollAll, snapshotCursor } from '../helpers/feed.ts';
import { useTestServer } from '../helpers/http.ts';

const database = useTestDatabase(test);
const server = useTestServer(test, database);

test.serial(
  'prunes changes older than the retention, batch after batch, and keeps the rest; twice is harmless',
  async (t) => {
    const { db, boss, config, log } = database();
    t.is(config.availabilityChangesRetentionSeconds, 86_400);
    const w = await makeBookingWorld(db);
    const date = await localDate(db, w.venueId, 1);
    const cursor = await snapshotCursor(server(), w.apiKey, w.venueId, date);
    await holdSlot(server(), w, { index: 0 });
    // More old changes than one batch, the last of them committed but not positioned yet.
    await db.raw(
      `insert into availability_changes (venue_id, kind, resource_ids, windows, recorded_at)
     select ?, 'slot', array[?::uuid], array[tstzrange(now() + interval '1 day', now() + interval '25 hours')],
            now() - interval '2 days'
       from generate_series(1, ?)`,
      [w.venueId, w.court, AVAILABILITY_PRUNE_BATCH + 50],
    );
    await db('availability_changes')
      .where({ venue_id: w.venueId })
      .update({ recorded_at: db.raw("now() - interval '2 days'") });
    const young = await holdSlot(server(), w, { index: 3 });
    const total = async () =>
      Number((await db('availability_changes').where({ venue_id: w.venueId }).count({ n: '*' }))[0]!.n);
    t.is(await total(), AVAILABILITY_PRUNE_BATCH + 52);

    const run = () => availabilityPrune.handle({}, { db, boss, config, log }, { id: randomUUID() } as never);
    await run();
    t.is(await total(), 1, 'only the young hold’s change is left');
    const [purge] = await db('availability_change_purges').where({ venue_id: w.venueId });
    const kept = await db('availability_changes').where({ venue_id: w.venueId }).first();
    t.true(BigInt(purge.through_position) < BigInt(kept.position));
    await Promise.all([run(), run()]);
    t.is(await total(), 1);

    // A cursor from before the pruned changes stays expired; one after them lists the young change.
    const expired = await poll(server(), w.apiKey, { venue_id: w.venueId, after: cursor });
    t.is(expired.status, 410);
    t.is(expired.body.error, 'CURSOR_EXPIRED');
    const after = BigInt(purge.through_position).toString(36);
    const listed = await pollAll(server(), w.apiKey, w.venueId, after);
    t.deepEqual(
      listed.events.map((e) => e.slot_id),
      [young.slotId],
    );
  },
);

test.serial('migrate leaves the schedule of availability.prune, at least hourly', async (t) => {
  const { rows } = await database().db.raw(
    'select name, cron, timezone from pgboss.schedule where name = ?',
    [AVAILABILITY_PRUNE.name],
  );
  t.deepEqual(rows, [{ name: 'availability.prune', cron: AVAILABILITY_PRUNE_CRON, timezone: 'UTC' }]);
  t.is(AVAILABILITY_PRUNE_CRON, '*/10 * * * *');
});
