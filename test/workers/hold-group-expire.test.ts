/**
 * hold_group.expire: the handler directly (due, twice, concurrently, early, after a new hold in the
 * way expired the group first), and once end to end with a venue's short hold time and real
 * workers: every hold expires once, every window is free, and each freed window promotes a waiting
 * entry.
 */
import test from 'ava';
import { randomUUID } from 'node:crypto';
import { startWorkers } from '../../workers/main.ts';
import { holdGroupExpire } from '../../workers/hold-group-expire.ts';
import { RetryLaterError } from '../../workers/job-handler.ts';
import { waitlistPromote } from '../../workers/waitlist-promote.ts';
import { hold, localDate, makeBookingWorld } from '../helpers/booking.ts';
import { useTestDatabase } from '../helpers/database.ts';
import { itemOf, makeGroupOverdue, placeGroup, readGroup } from '../helpers/hold-groups.ts';
import { useTestServer } from '../helpers/http.ts';
import { waitFor } from '../helpers/wait.ts';
import { join } from '../helpers/waitlist.ts';

const database = useTestDatabase(test);
const server = useTestServer(test, database);

const deps = () => ({
  db: database().db,
  boss: database().boss,
  config: database().config,
  log: database().log,
});
const run = (groupId: string) =>
  holdGroupExpire.handle({ hold_group_id: groupId }, deps(), { id: randomUUID() } as never);

/** The types of the events of these holds, per hold, in order. */
async function eventsOf(holdIds: string[]): Promise<string[][]> {
  const { db } = database();
  const rows = await db('events')
    .whereIn('hold_id', holdIds)
    .orderBy([{ column: 'tx' }, { column: 'seq' }]);
  return holdIds.map((id) => rows.filter((e) => e.hold_id === id).map((e) => e.event_type as string));
}

/** The payloads of the promotion jobs that name any of these events. */
async function promoteJobs(eventIds: string[]): Promise<{ event_ids: string[] }[]> {
  const { rows } = await database().db.raw<{ rows: { data: { event_ids: string[] } }[] }>(
    `select data from pgboss.job where name = 'waitlist.promote'
        and exists (select from jsonb_array_elements_text(data->'event_ids') e where e = any (?))`,
    [eventIds],
  );
  return rows.map((r) => r.data);
}

test("a late group expiry dates every hold_expired at the group's hold_expiry_at", async (t) => {
  const { db } = database();
  const w = await makeBookingWorld(db);
  const items = [await itemOf(db, w.venueId, w.court, 2), await itemOf(db, w.venueId, w.full, 2)];
  const { groupId, holdIds } = await placeGroup(server(), w, items);
  await makeGroupOverdue(db, groupId, 50);
  await run(groupId);
  const expiry = (await db('hold_groups').where({ id: groupId }).first()).hold_expiry_at as Date;
  const events = await db('events').whereIn('hold_id', holdIds).where({ event_type: 'hold_expired' });
  t.is(events.length, 2);
  for (const event of events) t.is(event.occurred_at.toISOString(), expiry.toISOString());
});

test('a due group: every hold expires once with hold_expired, every window freed, one promotion job for all', async (t) => {
  const { db } = database();
  const w = await makeBookingWorld(db);
  const items = [await itemOf(db, w.venueId, w.court, 0), await itemOf(db, w.venueId, w.full, 0)];
  const { groupId, holdIds } = await placeGroup(server(), w, items);
  await makeGroupOverdue(db, groupId);
  await run(groupId);
  await run(groupId);
  await Promise.all([run(groupId), run(groupId), run(groupId)]);
  t.is((await db('hold_groups').where({ id: groupId }).first()).status, 'EXPIRED');
  t.deepEqual(
    (await db('holds').whereIn('id', holdIds).orderBy('item_index')).map((h) => h.status),
    ['EXPIRED', 'EXPIRED'],
  );
  t.deepEqual(await eventsOf(holdIds), [
    ['hold_created', 'hold_expired'],
    ['hold_created', 'hold_expired'],
  ]);
  const expired = await db('events')
    .whereIn('hold_id', holdIds)
    .where({ event_type: 'hold_expired' })
    .orderBy('seq');
  t.true(expired.every((e) => e.details.hold_group_id === groupId));
  t.is(
    Number(
      (await db('reservations').whereIn('hold_id', holdIds).where({ active: true }).count({ n: '*' }))[0]!.n,
    ),
    0,
  );
  const jobs = await promoteJobs(expired.map((e) => e.id));
  t.deepEqual(jobs, [{ event_ids: expired.map((e) => e.id) }], 'one promotion job, naming each freed window');
  const read = await readGroup(server(), w.apiKey, groupId);
  t.is(read.body.status, 'EXPIRED');
});

test('a job that runs early is retried later; nothing changes', async (t) => {
  const { db } = database();
  const w = await makeBookingWorld(db);
  const { groupId, holdIds } = await placeGroup(server(), w, [await itemOf(db, w.venueId, w.court, 1)]);
  await t.throwsAsync(() => run(groupId), { instanceOf: RetryLaterError });
  t.is((await db('hold_groups').where({ id: groupId }).first()).status, 'ACTIVE');
  t.deepEqual(await eventsOf(holdIds), [['hold_created']]);
  await t.notThrowsAsync(() => run(randomUUID()), 'an unknown group is nothing to do');
});

test('a new hold in the way of an overdue grouped hold expires the whole group at once; the late job adds nothing', async (t) => {
  const { db } = database();
  const w = await makeBookingWorld(db);
  const items = [await itemOf(db, w.venueId, w.court, 2), await itemOf(db, w.venueId, w.halfA, 2)];
  const { groupId, holdIds } = await placeGroup(server(), w, items);
  await makeGroupOverdue(db, groupId);
  const next = await hold(server(), w.apiKey, { venue_id: w.venueId, ...items[0]! });
  t.is(next.status, 201, next.text);
  t.is(
    (await db('hold_groups').where({ id: groupId }).first()).status,
    'EXPIRED',
    'the group expired as one',
  );
  t.deepEqual(await eventsOf(holdIds), [
    ['hold_created', 'hold_expired'],
    ['hold_created', 'hold_expired'],
  ]);
  await run(groupId);
  t.deepEqual(await eventsOf(holdIds), [
    ['hold_created', 'hold_expired'],
    ['hold_created', 'hold_expired'],
  ]);
});

test('end to end with a 2-second hold time: the group expires by itself, its windows are free and each promotes an entry', async (t) => {
  const { db, url, config, log } = database();
  const w = await makeBookingWorld(db, { holdSeconds: 2 });
  const date = await localDate(db, w.venueId, 1);
  const entries: string[] = [];
  for (const resource of [w.court, w.halfB]) {
    const res = await join(server(), w.apiKey, {
      venue_id: w.venueId,
      resource_id: resource,
      slot_date: date,
    });
    t.is(res.status, 201, res.text);
    entries.push(res.body.entry.id as string);
  }
  const items = [await itemOf(db, w.venueId, w.court, 3), await itemOf(db, w.venueId, w.halfB, 3)];
  const { groupId, holdIds } = await placeGroup(server(), w, items);
  // From hold_expiry_at on, the group reads EXPIRED and its windows are free, job or no job.
  await waitFor(async () => (await readGroup(server(), w.apiKey, groupId)).body.status === 'EXPIRED', {
    timeout: 10_000,
  });
  const workers = await startWorkers(config, url, log);
  try {
    await waitFor(async () => (await db('hold_groups').where({ id: groupId }).first()).status === 'EXPIRED', {
      timeout: 20_000,
    });
    await waitFor(
      async () => (await db('waitlist_entries').whereIn('id', entries)).every((e) => e.status === 'promoted'),
      { timeout: 20_000 },
    );
  } finally {
    await workers.stop();
  }
  t.deepEqual(await eventsOf(holdIds), [
    ['hold_created', 'hold_expired'],
    ['hold_created', 'hold_expired'],
  ]);
  const promoted = await db('waitlist_entries').whereIn('id', entries);
  t.is(new Set(promoted.map((e) => e.slot_id)).size, 2, 'each freed window promoted its own entry');
});

test('waitlist.promote of an earlier release names one event (event_id) and still runs', async (t) => {
  const { db } = database();
  const w = await makeBookingWorld(db);
  const date = await localDate(db, w.venueId, 2);
  const entry = await join(server(), w.apiKey, {
    venue_id: w.venueId,
    resource_id: w.court,
    slot_date: date,
  });
  const { groupId, holdIds } = await placeGroup(server(), w, [
    await itemOf(db, w.venueId, w.court, 0, { daysAhead: 2 }),
  ]);
  await makeGroupOverdue(db, groupId);
  await run(groupId);
  const [event] = await db('events').where({ hold_id: holdIds[0], event_type: 'hold_expired' }).pluck('id');
  await waitlistPromote.handle({ event_id: event }, deps(), { id: randomUUID() } as never);
  t.is((await db('waitlist_entries').where({ id: entry.body.entry.id }).first()).status, 'promoted');
});
