/**
 * The waitlist jobs. waitlist.promote directly: a freed window promotes the oldest waiting entry,
 * exactly one, however often or concurrently its job runs and when several windows free at once;
 * nothing for a window taken again at once, and never a lapsed, cancelled or unauthorised entry.
 * waitlist.expire directly: due, stale after a re-join, early. And once end to end: a release
 * reaches a subscriber as a signed waitlist_promoted delivery through real workers.
 */
import test, { type ExecutionContext } from 'ava';
import { randomUUID } from 'node:crypto';
import * as grants from '../../db/queries/venue-grants.ts';
import { startWorkers } from '../../workers/main.ts';
import { EntryNotDueError, waitlistExpire } from '../../workers/waitlist-expire.ts';
import { waitlistPromote } from '../../workers/waitlist-promote.ts';
import {
  bookSlot,
  gridSlots,
  holdSlot,
  localDate,
  makeBookingWorld,
  makeOverdue,
  releaseHold,
} from '../helpers/booking.ts';
import { testConfig, useTestDatabase } from '../helpers/database.ts';
import { makePartner } from '../helpers/factories.ts';
import { call, useTestServer } from '../helpers/http.ts';
import { waitFor } from '../helpers/wait.ts';
import { join } from '../helpers/waitlist.ts';
import { startReceiver, subscribe } from '../helpers/webhooks.ts';

const database = useTestDatabase(test);
const server = useTestServer(test, database);

const deps = () => ({
  db: database().db,
  boss: database().boss,
  config: database().config,
  log: database().log,
});
const promote = (eventId: string) =>
  waitlistPromote.handle({ event_id: eventId }, deps(), { id: randomUUID() } as never);
const expire = (entryId: string, expiresAt: string) =>
  waitlistExpire.handle({ entry_id: entryId, expires_at: expiresAt }, deps(), { id: randomUUID() } as never);

/** A world whose court has `waiting` entries for tomorrow (oldest first), and tomorrow's grid. */
async function queue(waiting: number) {
  const { db } = database();
  const w = await makeBookingWorld(db);
  const date = await localDate(db, w.venueId, 1);
  const entries: string[] = [];
  for (let i = 0; i < waiting; i++) {
    const res = await join(server(), w.apiKey, {
      venue_id: w.venueId,
      resource_id: w.court,
      slot_date: date,
      customer_phone: `900000000${i}`,
    });
    entries.push(res.body.entry.id as string);
  }
  return { ...w, date, entries, slots: await gridSlots(db, w.venueId, w.court) };
}

/** The id of the hold's latest event of `type`. */
async function eventOf(holdId: string, type: string): Promise<string> {
  return (await database().db('events').where({ hold_id: holdId, event_type: type }).first()).id as string;
}

async function statuses(ids: string[]): Promise<string[]> {
  const rows = await database().db('waitlist_entries').whereIn('id', ids);
  return ids.map((id) => rows.find((r) => r.id === id)!.status as string);
}

async function promotedEvents(venueId: string) {
  return database().db('events').where({ venue_id: venueId, event_type: 'waitlist_promoted' });
}

/** How many waitlist.promote jobs name this event. */
async function promoteJobs(eventId: string): Promise<number> {
  const { rows } = await database().db.raw<{ rows: { n: number }[] }>(
    "select count(*)::int as n from pgboss.job where name = 'waitlist.promote' and data->>'event_id' = ?",
    [eventId],
  );
  return rows[0]!.n;
}

test('a released window promotes the oldest waiting entry to its first slot, once however often the job runs', async (t) => {
  const { db } = database();
  const w = await queue(3);
  const subscription = await subscribe(server(), w.apiKey, 'https://partner.example.test/h', [
    'waitlist_promoted',
  ]);
  const { holdId } = await holdSlot(server(), w, { index: 2, minutes: 120 });
  await releaseHold(server(), w, holdId);
  const eventId = await eventOf(holdId, 'hold_cancelled');
  t.is(await promoteJobs(eventId), 1, 'the release enqueued the promotion in its transaction');

  await promote(eventId);
  await promote(eventId);
  await Promise.all([promote(eventId), promote(eventId), promote(eventId)]);
  t.deepEqual(await statuses(w.entries), ['promoted', 'waiting', 'waiting']);
  const entry = await db('waitlist_entries').where({ id: w.entries[0] }).first();
  t.is(entry.slot_id, (await db('holds').where({ id: holdId }).first()).slot_id, "the window's first slot");
  t.truthy(entry.promoted_at);

  const events = await promotedEvents(w.venueId);
  t.is(events.length, 1);
  t.like(events[0], { partner_id: w.partnerId, slot_id: entry.slot_id, hold_id: null, booking_id: null });
  t.like(events[0].details, {
    waitlist_entry_id: entry.id,
    resource_id: w.court,
    slot_date: w.date,
    slot_start: w.slots[2]!.slot_start.toISOString(),
    slot_end: w.slots[4]!.slot_start.toISOString(),
    price_rupees: 1000,
    status: 'promoted',
  });
  const published = await db('webhook_deliveries').where({ event_id: events[0].id });
  t.deepEqual(
    published.map((d) => d.subscription_id),
    [subscription.id],
    'the event is published for webhooks, once',
  );

  const shown = await call(
    server(),
    'GET',
    `/api/v1/waitlist?venue_id=${w.venueId}&resource_id=${w.court}&slot_date=${w.date}&status=promoted`,
    {
      key: w.apiKey,
    },
  );
  t.like(shown.body.data, [{ id: entry.id, status: 'promoted', slot_id: entry.slot_id }]);
});

test('several windows freed at once promote the oldest entries, one each, even with every job run twice at once', async (t) => {
  const w = await queue(4);
  const holds: string[] = [];
  for (const index of [0, 3, 6]) holds.push((await holdSlot(server(), w, { index })).holdId);
  await Promise.all(holds.map((h) => releaseHold(server(), w, h)));
  const events = await Promise.all(holds.map((h) => eventOf(h, 'hold_cancelled')));
  await Promise.all([...events, ...events].map((e) => promote(e)));
  t.deepEqual(await statuses(w.entries), ['promoted', 'promoted', 'promoted', 'waiting']);
  const { db } = database();
  const promoted = await db('waitlist_entries').whereIn('id', w.entries.slice(0, 3));
  t.is(new Set(promoted.map((e) => e.slot_id as string)).size, 3, 'each entry got its own window');
  t.is((await promotedEvents(w.venueId)).length, 3);
  t.is(Number((await db('waitlist_promotions').whereIn('event_id', events).count({ n: '*' }))[0]!.n), 3);
});

test('two windows freed with one entry waiting promote it once; the other window finds nobody', async (t) => {
  const w = await queue(1);
  const holds: string[] = [];
  for (const index of [0, 1]) holds.push((await holdSlot(server(), w, { index })).holdId);
  await Promise.all(holds.map((h) => releaseHold(server(), w, h)));
  const events = await Promise.all(holds.map((h) => eventOf(h, 'hold_cancelled')));
  await Promise.all(events.map((e) => promote(e)));
  t.deepEqual(await statuses(w.entries), ['promoted']);
  t.is((await promotedEvents(w.venueId)).length, 1);
});

test('expiry, cancel and refund of a booked window promote; a refund after a cancel frees nothing more', async (t) => {
  const { db } = database();
  const w = await queue(3);
  const { holdId: stale } = await holdSlot(server(), w, { index: 0 });
  await makeOverdue(db, stale);
  const { holdExpire } = await import('../../workers/hold-expire.ts');
  await holdExpire.handle({ hold_id: stale }, deps(), { id: randomUUID() } as never);
  await promote(await eventOf(stale, 'hold_expired'));
  t.deepEqual(await statuses(w.entries), ['promoted', 'waiting', 'waiting']);

  const change = (bookingId: string, op: string) =>
    call(server(), 'POST', `/api/v1/bookings/${bookingId}/${op}`, {
      key: w.apiKey,
      body: { idempotency_key: randomUUID() },
    });
  const cancelled = await bookSlot(server(), w, { index: 1 });
  await change(cancelled.bookingId, 'cancel');
  await change(cancelled.bookingId, 'refund');
  const cancelEvent = (
    await db('events').where({ booking_id: cancelled.bookingId, event_type: 'booking_cancelled' }).first()
  ).id;
  const refundEvent = (
    await db('events').where({ booking_id: cancelled.bookingId, event_type: 'booking_refunded' }).first()
  ).id;
  t.is(await promoteJobs(refundEvent), 0, 'the window was freed by the cancel already');
  await promote(cancelEvent);
  t.deepEqual(await statuses(w.entries), ['promoted', 'promoted', 'waiting']);

  const refunded = await bookSlot(server(), w, { index: 2 });
  await change(refunded.bookingId, 'refund');
  await promote(
    (await db('events').where({ booking_id: refunded.bookingId, event_type: 'booking_refunded' }).first()).id,
  );
  t.deepEqual(await statuses(w.entries), ['promoted', 'promoted', 'promoted']);
});

test('a window taken again at once promotes nobody; lapsed, cancelled and unauthorised entries are passed over', async (t) => {
  const { db } = database();
  const w = await queue(4);
  // A new hold on an overdue hold's window expires it and takes the window in one transaction.
  const { holdId: stale } = await holdSlot(server(), w, { index: 0 });
  await makeOverdue(db, stale);
  await holdSlot(server(), w, { index: 0 });
  await promote(await eventOf(stale, 'hold_expired'));
  t.deepEqual(await statuses(w.entries), ['waiting', 'waiting', 'waiting', 'waiting']);

  // The three oldest cannot be promoted: lapsed, cancelled, and of a partner whose grant was withdrawn.
  await db('waitlist_entries')
    .where({ id: w.entries[0] })
    .update({ expires_at: db.raw("now() - interval '1 second'") });
  await call(server(), 'DELETE', `/api/v1/waitlist/${w.entries[1]}`, { key: w.apiKey });
  const other = await makePartner(db);
  await grants.grant(db, other.partnerId, w.venueId);
  const revoked = await db('waitlist_entries')
    .where({ id: w.entries[2] })
    .update({ partner_id: other.partnerId })
    .returning('id');
  await grants.revoke(db, other.partnerId, w.venueId);
  t.is(revoked.length, 1);

  const { holdId: freed } = await holdSlot(server(), w, { index: 1 });
  await releaseHold(server(), w, freed);
  await promote(await eventOf(freed, 'hold_cancelled'));
  t.deepEqual(await statuses(w.entries), ['waiting', 'cancelled', 'waiting', 'promoted']);
});

test('waitlist.expire: a due entry expires; a re-joined or promoted one is left alone; an early job is retried', async (t) => {
  const { db } = database();
  const w = await queue(2);
  const [first, second] = w.entries as [string, string];
  const due = (
    await db('waitlist_entries')
      .where({ id: first })
      .update({ expires_at: db.raw("date_trunc('milliseconds', now() - interval '1 second')") })
      .returning('expires_at')
  )[0].expires_at as Date;
  await expire(first, due.toISOString());
  await expire(first, due.toISOString());
  t.deepEqual(await statuses([first]), ['expired']);

  // A re-join refreshes expires_at: the job scheduled for the old expiry changes nothing.
  await join(server(), w.apiKey, {
    venue_id: w.venueId,
    resource_id: w.court,
    slot_date: w.date,
    customer_phone: '9000000000',
  });
  await expire(first, due.toISOString());
  t.deepEqual(await statuses([first]), ['waiting']);

  const entry = await db('waitlist_entries').where({ id: second }).first();
  await t.throwsAsync(() => expire(second, entry.expires_at.toISOString()), { instanceOf: EntryNotDueError });
  await db('waitlist_entries').where({ id: second }).update({ status: 'promoted' });
  await expire(second, entry.expires_at.toISOString());
  t.deepEqual(await statuses([second]), ['promoted']);
});

test.serial(
  'end to end: a released window reaches a subscriber as a signed waitlist_promoted delivery',
  async (t: ExecutionContext) => {
    const { db, url, log } = database();
    const workers = await startWorkers(testConfig({ DATABASE_URL: url }), url, log);
    t.teardown(() => workers.stop());
    const w = await queue(1);
    let secret = '';
    const receiver = await startReceiver(() => secret);
    t.teardown(() => receiver.close());
    ({ secret } = await subscribe(server(), w.apiKey, receiver.url, ['waitlist_promoted']));

    await releaseHold(server(), w, (await holdSlot(server(), w, { index: 0 })).holdId);
    await waitFor(() => receiver.received.length > 0, { timeout: 20_000 });
    const delivery = receiver.received[0]!;
    t.is(delivery.rejection, undefined);
    t.like(delivery.event, {
      event_type: 'waitlist_promoted',
      venue_id: w.venueId,
      partner_id: w.partnerId,
      hold_id: null,
      booking_id: null,
    });
    t.is(delivery.event!.details.waitlist_entry_id, w.entries[0]);
    t.deepEqual(await statuses(w.entries), ['promoted']);
    t.is((await db('events').where({ venue_id: w.venueId, event_type: 'waitlist_promoted' })).length, 1);
  },
);
