/**
 * hold.expire: the handler directly (due, twice, early, after the window was reused), and once end
 * to end through pg-boss with a real worker.
 */
import test from 'ava';
import { randomUUID } from 'node:crypto';
import { enqueue } from '../../db/jobs/enqueue.ts';
import { HOLD_EXPIRE } from '../../db/jobs/kinds.ts';
import { holdExpire, HoldNotDueError } from '../../workers/hold-expire.ts';
import { startWorkers } from '../../workers/main.ts';
import { eventTypes, hold, holdSlot, makeBookingWorld, makeOverdue } from '../helpers/booking.ts';
import { useTestDatabase } from '../helpers/database.ts';
import { call, useTestServer } from '../helpers/http.ts';
import { waitFor } from '../helpers/wait.ts';

const database = useTestDatabase(test);
const server = useTestServer(test, database);

const deps = () => ({
  db: database().db,
  boss: database().boss,
  config: database().config,
  log: database().log,
});
const run = (holdId: string) => holdExpire.handle({ hold_id: holdId }, deps(), { id: randomUUID() } as never);

test('a due hold is expired, its window freed and hold_expired recorded, once however often the job runs', async (t) => {
  const { db } = database();
  const w = await makeBookingWorld(db);
  const h = await holdSlot(server(), w, { index: 0 });
  await makeOverdue(db, h.holdId);
  await run(h.holdId);
  await run(h.holdId);
  await Promise.all([run(h.holdId), run(h.holdId), run(h.holdId)]);
  t.is((await db('holds').where({ id: h.holdId }).first()).status, 'EXPIRED');
  t.deepEqual(await eventTypes(db, h.holdId), ['hold_created', 'hold_expired']);
  t.is(
    Number((await db('reservations').where({ hold_id: h.holdId, active: true }).count({ n: '*' }))[0]!.n),
    0,
  );
});

test('hold_expired is dated at hold_expiry_at however late the expiry runs: its delivery and the pull say when the hold expired', async (t) => {
  const { db } = database();
  const w = await makeBookingWorld(db);
  const h = await holdSlot(server(), w, { index: 5 });
  await makeOverdue(db, h.holdId, 45);
  await run(h.holdId);
  const held = await db('holds').where({ id: h.holdId }).first();
  const event = await db('events').where({ hold_id: h.holdId, event_type: 'hold_expired' }).first();
  t.is(event.occurred_at.toISOString(), held.hold_expiry_at.toISOString());
  const timestamp = async () => {
    const res = await call(server(), 'GET', '/api/v1/events?types=hold_expired', { key: w.apiKey });
    return (res.body.data as { hold_id: string; timestamp: string }[]).find((e) => e.hold_id === h.holdId)
      ?.timestamp;
  };
  // The pull waits for older transactions of the whole server (other files') to end.
  await waitFor(async () => (await timestamp()) !== undefined, { timeout: 15_000 });
  t.is(await timestamp(), held.hold_expiry_at.toISOString());
});

test('a job that runs early throws so pg-boss retries it; nothing changes', async (t) => {
  const { db } = database();
  const w = await makeBookingWorld(db);
  const h = await holdSlot(server(), w, { index: 1 });
  await t.throwsAsync(() => run(h.holdId), { instanceOf: HoldNotDueError });
  t.is((await db('holds').where({ id: h.holdId }).first()).status, 'ACTIVE');
  t.deepEqual(await eventTypes(db, h.holdId), ['hold_created']);
});

test('a late job after the window was reused changes nothing and records nothing', async (t) => {
  const { db } = database();
  const w = await makeBookingWorld(db);
  const h = await holdSlot(server(), w, { index: 2 });
  await makeOverdue(db, h.holdId);
  const next = await hold(server(), w.apiKey, {
    venue_id: w.venueId,
    resource_id: w.court,
    slot_start: h.slotStart,
  });
  t.is(next.status, 201);
  await run(h.holdId);
  t.deepEqual(await eventTypes(db, h.holdId), ['hold_created', 'hold_expired']);
  t.is(
    (await db('holds').where({ id: next.body.hold_id }).first()).status,
    'ACTIVE',
    'the new hold is untouched',
  );
});

test('confirmed, released and unknown holds are left alone', async (t) => {
  const { db } = database();
  const w = await makeBookingWorld(db);
  const h = await holdSlot(server(), w, { index: 3 });
  await db('holds').where({ id: h.holdId }).update({ status: 'CONFIRMED' });
  await makeOverdue(db, h.holdId);
  await run(h.holdId);
  t.is((await db('holds').where({ id: h.holdId }).first()).status, 'CONFIRMED');
  await t.notThrowsAsync(() => run(randomUUID()));
});

test('end to end: the job enqueued by the hold, run by a worker through pg-boss, expires the hold', async (t) => {
  const { db, url, config, log, boss } = database();
  const w = await makeBookingWorld(db);
  const h = await holdSlot(server(), w, { index: 4 });
  await makeOverdue(db, h.holdId);
  // The hold's own job waits for the original expiry; send one due now, as that moment would.
  await db.transaction((trx) => enqueue(boss, trx, HOLD_EXPIRE, { hold_id: h.holdId }));
  const workers = await startWorkers(config, url, log);
  try {
    await waitFor(async () => (await db('holds').where({ id: h.holdId }).first()).status === 'EXPIRED', {
      timeout: 15_000,
    });
    t.deepEqual(await eventTypes(db, h.holdId), ['hold_created', 'hold_expired']);
    const [job] = await db
      .raw<{ rows: { n: number }[] }>(
        "select count(*)::int as n from pgboss.job where name = 'hold.expire' and data->>'hold_id' = ?",
        [h.holdId],
      )
      .then((r) => r.rows);
    t.is(job!.n, 2, 'the hold enqueued its own job in its transaction');
  } finally {
    await workers.stop();
  }
});
