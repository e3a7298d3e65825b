/**
 * A partner naming another partner's hold, booking, hold group or series in a write is answered
 * 403 UNAUTHORIZED without ever locking that row: it neither waits behind the owner's write in
 * progress nor makes the owner's next write wait behind it. Each write below is sent while a
 * transaction of the test holds the owner's row locked (as the owner's own write would); the
 * stranger's answer must come back while the lock is still held, with no backend of the database
 * left waiting on a lock. Before the fix each of them queued behind the lock until it was released.
 */
import test from 'ava';
import { randomUUID } from 'node:crypto';
import type { Knex } from '../../db/postgres/knex.ts';
import { bookSlot, confirm, holdSlot, makeBookingWorld } from '../helpers/booking.ts';
import { useTestDatabase } from '../helpers/database.ts';
import { makePartner } from '../helpers/factories.ts';
import { confirmGroup, itemOf, placeGroup, releaseGroup } from '../helpers/hold-groups.ts';
import { call, type CallResult, useTestServer } from '../helpers/http.ts';
import { changeSeries, createSeries, weeksFrom } from '../helpers/series.ts';
import { waitFor } from '../helpers/wait.ts';

const database = useTestDatabase(test);
const server = useTestServer(test, database);

/** Whether a backend of this database waits on a lock (a row lock shows as a transactionid wait). */
async function someoneWaitsOnALock(db: Knex): Promise<boolean> {
  const { rows } = await db.raw<{ rows: unknown[] }>(
    "select 1 from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'",
  );
  return rows.length > 0;
}

/**
 * Sends `request` while `table`'s row `id` is locked by another transaction; the answer if it came
 * while the lock was held, or 'waited' as soon as a backend waits on a lock instead.
 */
async function answerBesideLock(
  db: Knex,
  table: string,
  id: string,
  request: () => Promise<CallResult>,
): Promise<CallResult | 'waited'> {
  const holder = await db.transaction();
  try {
    await holder.raw('select 1 from ?? where id = ? for update', [table, id]);
    let answer: CallResult | undefined;
    const pending = request().then((res) => (answer = res));
    let waited = false;
    await waitFor(async () => answer !== undefined || (waited = await someoneWaitsOnALock(db)), {
      timeout: 30_000,
      interval: 20,
    });
    if (waited) {
      await holder.rollback();
      await pending;
      return 'waited';
    }
    return answer!;
  } finally {
    if (!holder.isCompleted()) await holder.rollback();
  }
}

test.serial("another partner's id in a write is 403 without locking the owner's row", async (t) => {
  const { db } = database();
  const w = await makeBookingWorld(db, { maxAdvanceDays: 60 });
  const stranger = await makePartner(db);
  const { holdId } = await holdSlot(server(), w, { index: 0 });
  const { bookingId } = await bookSlot(server(), w, { index: 1 });
  const { groupId } = await placeGroup(server(), w, [await itemOf(db, w.venueId, w.court, 2)]);
  const [first] = await weeksFrom(db, w.venueId, 2, [0]);
  const series = await createSeries(server(), w.apiKey, {
    venue_id: w.venueId,
    resource_id: w.court,
    first_date: first,
    start_time: '19:00',
    slot_duration_minutes: 60,
    count: 2,
  });
  t.is(series.status, 201, series.text);
  const seriesId = series.body.series_id as string;

  const key = stranger.apiKey;
  const writes: [string, string, string, () => Promise<CallResult>][] = [
    ['confirm a hold', 'holds', holdId, () => confirm(server(), key, { hold_id: holdId })],
    [
      'release a hold',
      'holds',
      holdId,
      () =>
        call(server(), 'POST', `/api/v1/partner/holds/${holdId}/cancel`, {
          key,
          body: { idempotency_key: randomUUID() },
        }),
    ],
    ...(['cancel', 'refund'] as const).map((change): [string, string, string, () => Promise<CallResult>] => [
      `${change} a booking`,
      'bookings',
      bookingId,
      () =>
        call(server(), 'POST', `/api/v1/bookings/${bookingId}/${change}`, {
          key,
          body: { idempotency_key: randomUUID() },
        }),
    ]),
    ['confirm a hold group', 'hold_groups', groupId, () => confirmGroup(server(), key, groupId)],
    ['release a hold group', 'hold_groups', groupId, () => releaseGroup(server(), key, groupId)],
    ['cancel a series', 'series', seriesId, () => changeSeries(server(), key, seriesId, 'cancel')],
    ['refund a series', 'series', seriesId, () => changeSeries(server(), key, seriesId, 'refund')],
  ];
  for (const [what, table, id, request] of writes) {
    const answer = await answerBesideLock(db, table, id, request);
    if (answer === 'waited') {
      t.fail(`${what}: the stranger's request waited for the owner's lock`);
      continue;
    }
    t.is(answer.status, 403, `${what}: ${answer.text}`);
    t.is(answer.body.error, 'UNAUTHORIZED', what);
  }
  // The owner's own writes still lock, and still work.
  t.is((await confirm(server(), w.apiKey, { hold_id: holdId })).status, 201);
});
