/**
 * GET /api/v1/events, the missed-event pull, used as a partner recovering what its endpoint missed:
 * every event of every type of the venues granted to it, each the body its webhook delivery carried
 * (delivery_id null); paging with starting_after to the end, `has_more` exact; `since` and `types`;
 * nothing of venues not granted; 400 for every bad parameter; and no page skips an event whose
 * transaction began earlier and commits later. Serial: real workers deliver to a receiver.
 *
 * The pull waits for every transaction older than an event to end, on the whole server: other test
 * files' transactions can hold it back for a moment, so assertions about what it lists first wait
 * until it has caught up with what was committed.
 */
import test, { type ExecutionContext } from 'ava';
import { randomUUID } from 'node:crypto';
import * as grants from '../../db/queries/venue-grants.ts';
import * as venues from '../../db/queries/venues.ts';
import { expireHoldIfDue } from '../../db/rules/hold-expiry.ts';
import type { WebhookEvent } from '../../db/rules/webhook-signature.ts';
import { startWorkers } from '../../workers/main.ts';
import {
  bookSlot,
  holdSlot,
  localDate,
  makeBookingWorld,
  makeOverdue,
  releaseHold,
} from '../helpers/booking.ts';
import { testConfig, useTestDatabase } from '../helpers/database.ts';
import { makePartner } from '../helpers/factories.ts';
import { call, useTestServer } from '../helpers/http.ts';
import { assertDocumented } from '../helpers/openapi.ts';
import { waitFor } from '../helpers/wait.ts';
import { join } from '../helpers/waitlist.ts';
import { startReceiver, subscribe } from '../helpers/webhooks.ts';
import { EVENT_TYPES } from '../../db/queries/events.ts';

const database = useTestDatabase(test);
const server = useTestServer(test, database);

const post = (path: string, key: string, body: Record<string, unknown>) =>
  call(server(), 'POST', `/api/v1${path}`, { key, body: { idempotency_key: randomUUID(), ...body } });

const pull = (key: string, query = '') => call(server(), 'GET', `/api/v1/events${query}`, { key });

/** Every page from the start (or `query`), `limit` at a time, checking each against the document. */
async function pullAll(t: ExecutionContext, key: string, limit: number, query = ''): Promise<WebhookEvent[]> {
  const events: WebhookEvent[] = [];
  let after = '';
  for (;;) {
    const res = await pull(key, `?limit=${limit}${query}${after && `&starting_after=${after}`}`);
    t.is(res.status, 200, res.text);
    assertDocumented(t, 'GET /events', res);
    t.true(res.body.data.length <= limit);
    events.push(...(res.body.data as WebhookEvent[]));
    if (!res.body.has_more) return events;
    t.is(res.body.data.length, limit, 'a page with more after it is full');
    after = res.body.data.at(-1).event_id;
  }
}

/** A world whose activity records every event type, watched by a second partner's receiver. */
async function everyEventType(t: ExecutionContext) {
  const { db, url, log } = database();
  const workers = await startWorkers(testConfig({ DATABASE_URL: url }), url, log);
  t.teardown(() => workers.stop());
  const w = await makeBookingWorld(db);
  const watcher = await makePartner(db);
  await grants.grant(db, watcher.partnerId, w.venueId);
  let secret = '';
  const receiver = await startReceiver(() => secret);
  t.teardown(() => receiver.close());
  ({ secret } = await subscribe(server(), watcher.apiKey, receiver.url));

  const joined = await join(server(), w.apiKey, {
    venue_id: w.venueId,
    resource_id: w.court,
    slot_date: await localDate(db, w.venueId, 1),
  });
  t.is(joined.status, 201, joined.text);
  await releaseHold(server(), w, (await holdSlot(server(), w, { index: 0 })).holdId); // promotes the entry
  const stale = await holdSlot(server(), w, { index: 1 });
  await makeOverdue(db, stale.holdId);
  await holdSlot(server(), w, { index: 1 }); // expires the stale hold on its way
  const booked = await bookSlot(server(), w, { index: 2 });
  await post(`/bookings/${booked.bookingId}/cancel`, w.apiKey, {});
  await post(`/bookings/${booked.bookingId}/refund`, w.apiKey, {});
  const recorded = () => db('events').where({ venue_id: w.venueId }).count<{ count: string }[]>();
  await waitFor(
    async () => {
      const types = new Set(receiver.received.map((x) => x.event?.event_type));
      return (
        EVENT_TYPES.every((type) => types.has(type)) &&
        receiver.received.length >= Number((await recorded())[0]!.count)
      );
    },
    { timeout: 30_000 },
  );
  return { w, watcher, receiver };
}

/** Waits until the pull lists `count` events for `key` (it has caught up with the commits). */
async function caughtUp(key: string, count: number): Promise<void> {
  await waitFor(async () => (await pull(key, '?limit=100')).body.data?.length === count, { timeout: 30_000 });
}

test.serial(
  'a partner pulls every event of its venues, of every type, each the body its webhook delivery carried',
  async (t) => {
    const { w, watcher, receiver } = await everyEventType(t);
    const recordedCount = await database()
      .db('events')
      .where({ venue_id: w.venueId })
      .count<{ n: string }[]>({ n: '*' });
    await caughtUp(watcher.apiKey, Number(recordedCount[0]!.n));
    const pulled = await pullAll(t, watcher.apiKey, 2);
    t.deepEqual([...new Set(pulled.map((e) => e.event_type))].sort(), [...EVENT_TYPES].sort(), 'every type');
    t.is(new Set(pulled.map((e) => e.event_id)).size, pulled.length, 'none twice');
    const recorded = await database().db('events').where({ venue_id: w.venueId }).pluck('id');
    t.deepEqual(pulled.map((e) => e.event_id).sort(), [...recorded].sort(), 'all of them');
    for (const delivered of receiver.received) {
      const event = delivered.event!;
      t.deepEqual(
        pulled.find((e) => e.event_id === event.event_id),
        { ...event, delivery_id: null },
        `${event.event_type} as delivered`,
      );
    }
    t.deepEqual(await pullAll(t, w.apiKey, 100), pulled, 'the partner whose changes they were sees the same');

    const types = await pullAll(
      t,
      watcher.apiKey,
      3,
      '&types=booking_created,booking_refunded,booking_created',
    );
    t.deepEqual(
      types,
      pulled.filter((e) => e.event_type === 'booking_created' || e.event_type === 'booking_refunded'),
    );
    const from = pulled.find((e) => e.event_type === 'booking_created')!.timestamp;
    t.deepEqual(
      await pullAll(t, watcher.apiKey, 100, `&since=${encodeURIComponent(from)}`),
      pulled.filter((e) => e.timestamp >= from),
      'since: the events at or after the instant',
    );
    const last = pulled.at(-1)!.event_id;
    const end = await pull(watcher.apiKey, `?starting_after=${last}`);
    t.deepEqual(end.body, { data: [], has_more: false }, 'after the last event: an empty page');
    const exact = await pull(watcher.apiKey, `?limit=${pulled.length}`);
    t.is(exact.body.has_more, false, 'a full page that ends at the last event says no more');
    t.is(exact.body.data.length, pulled.length);

    const stranger = await makePartner(database().db);
    t.deepEqual((await pull(stranger.apiKey)).body, { data: [], has_more: false }, 'no grant, no events');
    await grants.revoke(database().db, watcher.partnerId, w.venueId);
    t.deepEqual((await pull(watcher.apiKey)).body.data, [], 'granted now, not once');
  },
);

test.serial('a cursor of a venue revoked since resumes the pull with the venues still granted', async (t) => {
  const { db } = database();
  const gone = await makeBookingWorld(db);
  const kept = await makeBookingWorld(db);
  const watcher = await makePartner(db);
  await grants.grant(db, watcher.partnerId, gone.venueId);
  await grants.grant(db, watcher.partnerId, kept.venueId);
  await holdSlot(server(), kept, { index: 0 });
  await holdSlot(server(), gone, { index: 0 });
  await caughtUp(watcher.apiKey, 2);
  const lastSeen = (await pull(watcher.apiKey)).body.data.at(-1);
  t.is(lastSeen.venue_id, gone.venueId);

  await grants.revoke(db, watcher.partnerId, gone.venueId);
  const { holdId } = await holdSlot(server(), kept, { index: 1 });
  await holdSlot(server(), gone, { index: 1 });
  await waitFor(
    async () => (await pull(watcher.apiKey, `?starting_after=${lastSeen.event_id}`)).body.data?.length === 1,
  );
  const resumed = await pull(watcher.apiKey, `?starting_after=${lastSeen.event_id}`);
  t.is(resumed.status, 200, resumed.text);
  t.deepEqual(
    resumed.body.data.map((e: WebhookEvent) => [e.event_type, e.venue_id, e.hold_id]),
    [['hold_created', kept.venueId, holdId]],
    'what followed at the venue still granted, nothing of the one revoked',
  );
  assertDocumented(t, 'GET /events', resumed);

  // Granted again and revoked again: still a cursor. A partner that never held it: none.
  await grants.grant(db, watcher.partnerId, gone.venueId);
  await grants.revoke(db, watcher.partnerId, gone.venueId);
  t.is((await pull(watcher.apiKey, `?starting_after=${lastSeen.event_id}`)).status, 200);
  const stranger = await makePartner(db);
  t.is((await pull(stranger.apiKey, `?starting_after=${lastSeen.event_id}`)).status, 400);
});

test.serial('bad parameters are 400 VALIDATION_ERROR, documented', async (t) => {
  const { db } = database();
  const w = await makeBookingWorld(db);
  const other = await makeBookingWorld(db);
  await holdSlot(server(), other);
  const foreignEvent = (await db('events').where({ venue_id: other.venueId }).first()).id as string;
  for (const bad of [
    `?starting_after=${randomUUID()}`,
    `?starting_after=${foreignEvent}`,
    '?starting_after=x',
    '?since=yesterday',
    '?since=2026-11-22T10:00:00',
    `?since=2026-11-22T10:00:00Z&starting_after=${foreignEvent}`,
    '?types=booking_created,nope',
    '?types=',
    '?limit=0',
    '?limit=101',
    '?limit=1e1',
  ]) {
    const res = await pull(w.apiKey, bad);
    t.is(res.status, 400, bad);
    t.is(res.body.error, 'VALIDATION_ERROR', bad);
    assertDocumented(t, 'GET /events', res);
  }
});

test.serial('no page skips an event whose transaction began earlier and commits later', async (t) => {
  const { db } = database();
  const w = await makeBookingWorld(db);
  const insertEvent = (q: typeof db) =>
    q('events')
      .insert({
        event_type: 'hold_created',
        venue_id: w.venueId,
        partner_id: w.partnerId,
        slot_id: randomUUID(),
      })
      .returning<{ id: string }[]>('id');
  const early = await db.transaction();
  try {
    const [first] = await insertEvent(early);
    const [second] = await insertEvent(db); // committed now, while the first is still open
    t.deepEqual(
      (await pull(w.apiKey)).body,
      { data: [], has_more: false },
      'the later one waits for the earlier',
    );
    await early.commit();
    await caughtUp(w.apiKey, 2);
    const ids = (await pull(w.apiKey)).body.data.map((e: WebhookEvent) => e.event_id);
    t.deepEqual(ids, [first!.id, second!.id], 'then both, the earlier transaction first');
  } finally {
    if (!early.isCompleted()) await early.rollback();
  }
});

test.serial(
  'an archived venue: none of its events is pulled, and none recorded meanwhile is delivered',
  async (t) => {
    const { db } = database();
    const w = await makeBookingWorld(db);
    const watcher = await makePartner(db);
    await grants.grant(db, watcher.partnerId, w.venueId);
    const receiver = await startReceiver(() => '');
    t.teardown(() => receiver.close());
    const subscription = await subscribe(server(), watcher.apiKey, receiver.url);
    await holdSlot(server(), w, { index: 0 });
    const pending = await holdSlot(server(), w, { index: 1 });
    const recorded = await db('events').where({ venue_id: w.venueId }).pluck('id');
    await caughtUp(watcher.apiKey, recorded.length);
    const lastSeen = (await pull(watcher.apiKey)).body.data.at(-1).event_id as string;

    await venues.setStatus(db, w.venueId, 'archived');
    for (const key of [watcher.apiKey, w.apiKey]) {
      t.deepEqual((await pull(key)).body, { data: [], has_more: false }, 'none of its events, however old');
    }
    const after = await pull(watcher.apiKey, `?starting_after=${lastSeen}`);
    t.is(after.status, 200, 'the cursor it was handed is still a place to resume from');
    t.deepEqual(after.body, { data: [], has_more: false }, 'and lists none of its events');
    // The hold made before the venue was archived expires while it is: hold_expired is recorded, and
    // goes to no subscription.
    await makeOverdue(db, pending.holdId);
    await db.transaction((trx) => expireHoldIfDue(trx, database().boss, pending.holdId));
    const expired = await db('events').where({ hold_id: pending.holdId, event_type: 'hold_expired' }).first();
    t.truthy(expired, 'the expiry is recorded');
    t.deepEqual(await db('webhook_deliveries').where({ event_id: expired.id }).pluck('id'), []);
    t.is(
      (await db('webhook_deliveries').where({ subscription_id: subscription.id }).pluck('id')).length,
      recorded.length,
      'the deliveries of the events recorded while it was active, only',
    );
  },
);
