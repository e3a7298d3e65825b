/**
 * The availability change feed through the poll: what records a change and what does not, the
 * events a change yields (slots of the changed resource and of those sharing a unit, their state
 * now, held_until), operator ranges, cursors and paging, the snapshot cursor, expiry, and the
 * order of checks.
 */
import test, { type ExecutionContext } from 'ava';
import { randomUUID } from 'node:crypto';
import type { Knex } from '../../db/postgres/knex.ts';
import * as grants from '../../db/queries/venue-grants.ts';
import {
  bookSlot,
  confirm,
  gridSlots,
  hold,
  holdSlot,
  localDate,
  makeBookingWorld,
  type BookingWorld,
  releaseHold,
} from '../helpers/booking.ts';
import { testConfig, useTestDatabase } from '../helpers/database.ts';
import { makePartner } from '../helpers/factories.ts';
import { eventsArrive, openStream, ops, poll, pollAll, snapshotCursor } from '../helpers/feed.ts';
import { itemOf, placeGroup } from '../helpers/hold-groups.ts';
import { call, startApp, type TestServer } from '../helpers/http.ts';
import { assertDocumented } from '../helpers/openapi.ts';

const database = useTestDatabase(test);
let server: TestServer;
/** A web process that keeps changes 60 s (AVAILABILITY_CHANGES_RETENTION_SECONDS). */
let shortRetention: TestServer;
test.before(async () => {
  const db = await database.ready();
  server = await startApp(db);
  shortRetention = await startApp(db, {
    config: testConfig({ AVAILABILITY_CHANGES_RETENTION_SECONDS: '60' }),
  });
});
test.after.always(async () => {
  await server?.close();
  await shortRetention?.close();
});

const POLL = 'GET /slots/availability/changes';

/** Makes the changes of a venue (of every venue without one) older than `shortRetention` keeps. */
async function ageChanges(db: Knex, venueId?: string): Promise<void> {
  await db('availability_changes')
    .where(venueId ? { venue_id: venueId } : {})
    .update({ recorded_at: db.raw("now() - interval '2 minutes'") });
}

async function world() {
  const w = await makeBookingWorld(database().db);
  const date = await localDate(database().db, w.venueId, 1);
  const cursor = await snapshotCursor(server, w.apiKey, w.venueId, date);
  return { w, date, cursor };
}

test('a hold, its confirm and a cancel each list the slot as availability shows it then, with held_until', async (t) => {
  const { db } = database();
  const { w, date, cursor } = await world();
  const held = await holdSlot(server, w, { index: 2 });
  const first = await poll(server, w.apiKey, { venue_id: w.venueId, after: cursor });
  t.is(first.status, 200, first.text);
  assertDocumented(t, POLL, first);
  t.is(first.headers.get('x-poll-interval'), '5');
  t.false(first.body.has_more);
  const expiry = held.response.body.hold_expiry_at as string;
  t.deepEqual(first.body.data, [
    {
      type: 'slot',
      cursor: first.body.data[0].cursor,
      venue_id: w.venueId,
      slot_id: held.slotId,
      resource_id: w.court,
      slot_start: held.slotStart.toISOString(),
      slot_end: new Date(held.slotStart.getTime() + 3_600_000).toISOString(),
      price_rupees: 500,
      is_available: false,
      held_until: expiry,
    },
  ]);
  // The snapshot agrees: the slot is not available there either.
  const grid = await call(
    server,
    'GET',
    `/api/v1/slots/availability?venue_id=${w.venueId}&date=${date}&resource_id=${w.court}`,
    {
      key: w.apiKey,
    },
  );
  t.false(grid.body.slots.find((s: { slot_id: string }) => s.slot_id === held.slotId).is_available);

  const next = first.body.next_after as string;
  t.deepEqual(
    (await poll(server, w.apiKey, { venue_id: w.venueId, after: next })).body.data,
    [],
    'nothing twice',
  );
  const booked = await confirm(server, w.apiKey, { hold_id: held.holdId });
  t.is(booked.status, 201);
  const afterConfirm = await poll(server, w.apiKey, { venue_id: w.venueId, after: next });
  t.like(afterConfirm.body.data, [{ slot_id: held.slotId, is_available: false, held_until: null }]);
  const cancel = await call(server, 'POST', `/api/v1/bookings/${booked.body.booking_id}/cancel`, {
    key: w.apiKey,
    body: { idempotency_key: randomUUID() },
  });
  t.is(cancel.status, 200);
  const all = await pollAll(server, w.apiKey, w.venueId, cursor);
  t.deepEqual(
    all.events.map((e) => [e.slot_id, e.is_available, e.held_until]),
    [
      [held.slotId, true, null],
      [held.slotId, true, null],
      [held.slotId, true, null],
    ],
    'every event shows the state now: free again',
  );
  // A refund of a cancelled booking frees nothing and records nothing; neither does a replay.
  await call(server, 'POST', `/api/v1/bookings/${booked.body.booking_id}/refund`, {
    key: w.apiKey,
    body: { idempotency_key: randomUUID() },
  });
  t.deepEqual((await pollAll(server, w.apiKey, w.venueId, all.next)).events, []);
  t.is(Number((await db('availability_changes').where({ venue_id: w.venueId }).count({ n: '*' }))[0]!.n), 3);
});

/**
 * Holds the convertible whole's first slot `daysAhead` days ahead: one change of three events (the
 * whole and its two halves).
 */
async function holdWhole(t: ExecutionContext, w: BookingWorld, daysAhead: number) {
  const [slot] = await gridSlots(database().db, w.venueId, w.full, daysAhead);
  const held = await hold(server, w.apiKey, {
    venue_id: w.venueId,
    resource_id: w.full,
    slot_start: slot!.slot_start,
  });
  t.is(held.status, 201, held.text);
  return held;
}

test('a convertible whole and its parts: a change lists the slots of every resource sharing a unit', async (t) => {
  const { w, cursor } = await world();
  const held = await holdWhole(t, w, 1);
  const { events } = await pollAll(server, w.apiKey, w.venueId, cursor);
  t.deepEqual(
    events.map((e) => e.resource_id).sort(),
    [w.full, w.halfA, w.halfB].sort(),
    'the whole and both halves',
  );
  t.true(events.every((e) => e.is_available === false && e.held_until === held.body.hold_expiry_at));
  // One resource: its events and the venue-wide ones only.
  const half = await pollAll(server, w.apiKey, w.venueId, cursor, { resource_id: w.halfA });
  t.deepEqual(
    half.events.map((e) => e.resource_id),
    [w.halfA],
  );
  const court = await pollAll(server, w.apiKey, w.venueId, cursor, { resource_id: w.court });
  t.deepEqual(court.events, []);
});

test('a hold group is one change; its release is another', async (t) => {
  const { db } = database();
  const { w, cursor } = await world();
  const changes = async () =>
    Number((await db('availability_changes').where({ venue_id: w.venueId }).count({ n: '*' }))[0]!.n);
  const before = await changes();
  const group = await placeGroup(server, w, [
    await itemOf(db, w.venueId, w.court, 4),
    await itemOf(db, w.venueId, w.court, 6),
  ]);
  t.is(await changes(), before + 1);
  const { events } = await pollAll(server, w.apiKey, w.venueId, cursor);
  t.is(events.length, 2);
  t.is(new Set(events.map((e) => (e.cursor as string).split('-')[0])).size, 1, 'two events of one change');
  t.deepEqual(
    events.map((e) => (e.cursor as string).split('-')[1]),
    ['0', '1'],
  );
  const released = await call(server, 'POST', `/api/v1/bookings/hold-groups/${group.groupId}/cancel`, {
    key: w.apiKey,
    body: { idempotency_key: randomUUID() },
  });
  t.is(released.status, 200);
  t.is(await changes(), before + 2);
});

test('operator changes are ranges: blackout, price rule, venue status, new resource', async (t) => {
  const { db } = database();
  const { w, date, cursor } = await world();
  const today = await localDate(db, w.venueId, 0);
  const last = await localDate(db, w.venueId, 21);
  await ops(
    db,
    'blackout:add',
    '--venue',
    w.venueId,
    '--resource',
    w.court,
    '--from',
    `${date}T02:00:00Z`,
    '--to',
    `${date}T04:00:00Z`,
  );
  await ops(db, 'price:add', '--resource', w.halfA, '--price', '900', '--date', date);
  await ops(db, 'price:add', '--resource', w.halfB, '--price', '900');
  await ops(db, 'venue:status', '--venue', w.venueId, '--status', 'active');
  const created = await ops(
    db,
    'resource:create',
    '--venue',
    w.venueId,
    '--type',
    'court',
    '--sport',
    'badminton',
    '--duration',
    '60',
    '--price',
    '400',
    '--open',
    '06:00',
    '--close',
    '22:00',
  );
  const { events } = await pollAll(server, w.apiKey, w.venueId, cursor);
  t.deepEqual(
    events.map(({ cursor: _c, ...e }) => e),
    [
      { type: 'range', venue_id: w.venueId, resource_id: w.court, from: date, to: date, reason: 'blackout' },
      {
        type: 'range',
        venue_id: w.venueId,
        resource_id: w.halfA,
        from: date,
        to: date,
        reason: 'price_rule',
      },
      {
        type: 'range',
        venue_id: w.venueId,
        resource_id: w.halfB,
        from: today,
        to: last,
        reason: 'price_rule',
      },
      {
        type: 'range',
        venue_id: w.venueId,
        resource_id: null,
        from: today,
        to: last,
        reason: 'venue_status',
      },
      {
        type: 'range',
        venue_id: w.venueId,
        resource_id: created.resource_id,
        from: today,
        to: last,
        reason: 'resource',
      },
    ],
  );
  // Grants and keys change nothing availability shows: nothing recorded.
  const other = await makePartner(db);
  await grants.grant(db, other.partnerId, w.venueId);
  t.deepEqual((await pollAll(server, w.apiKey, w.venueId, cursor)).events.length, 5);
});

test('paging: has_more exactly when more follow, next_after the last cursor then the feed position; never twice', async (t) => {
  const { w, cursor } = await world();
  for (const index of [0, 1, 2, 3, 4]) await holdSlot(server, w, { index });
  const seen: string[] = [];
  let after = cursor;
  for (const expected of [true, true, false]) {
    const res = await poll(server, w.apiKey, { venue_id: w.venueId, after, limit: 2 });
    t.is(res.body.has_more, expected, res.text);
    seen.push(...res.body.data.map((e: { cursor: string }) => e.cursor));
    if (expected) t.is(res.body.next_after, res.body.data.at(-1).cursor);
    after = res.body.next_after;
  }
  t.is(seen.length, 5);
  t.is(new Set(seen).size, 5);
  // A full last page: has_more false.
  const exact = await poll(server, w.apiKey, { venue_id: w.venueId, after: cursor, limit: 5 });
  t.false(exact.body.has_more);
  // Every event's cursor resumes right after it.
  const fromThird = await poll(server, w.apiKey, { venue_id: w.venueId, after: seen[2]!, limit: 500 });
  t.deepEqual(
    fromThird.body.data.map((e: { cursor: string }) => e.cursor),
    seen.slice(3),
  );
});

// Serial, so that no other test's change lands after this one's: the feed's last change is the one
// paged through.
test.serial(
  'paging through the log’s last change one event at a time ends past it, never back inside it',
  async (t) => {
    const { w, cursor } = await world();
    await holdWhole(t, w, 2);
    const seen: string[] = [];
    let after = cursor;
    for (let page = 0; page < 10; page++) {
      const res = await poll(server, w.apiKey, { venue_id: w.venueId, after, limit: 1 });
      t.is(res.status, 200, res.text);
      seen.push(...res.body.data.map((e: { cursor: string }) => e.cursor));
      after = res.body.next_after;
      if (!res.body.has_more) break;
    }
    t.is(seen.length, 3, 'the whole and its two halves');
    t.is(new Set(seen).size, 3);
    const again = await poll(server, w.apiKey, { venue_id: w.venueId, after });
    t.deepEqual(again.body.data, [], 'polling from next_after lists nothing twice');
    t.is(again.body.next_after, after);
  },
);

test('checks in order: the cursor’s shape, the venue (403), the resource (400), a cursor never written (400)', async (t) => {
  const { w, cursor } = await world();
  const bad = async (query: Record<string, string | number>, field: string, status = 400) => {
    const res = await poll(server, w.apiKey, { venue_id: w.venueId, after: cursor, ...query });
    t.is(res.status, status, `${field}: ${res.text}`);
    if (status === 400) {
      t.deepEqual(
        res.body.details.map((d: { field: string; in: string }) => [d.field, d.in]),
        [[field, 'query']],
      );
    }
    assertDocumented(t, POLL, res);
  };
  await bad({ after: '' }, 'after');
  await bad({ after: 'a b' }, 'after');
  await bad({ after: 'x'.repeat(65) }, 'after');
  await bad({ after: '00' }, 'after');
  await bad({ after: '0-0' }, 'after'); // no change has position 0: its events' cursors were never written
  await bad({ after: 'zzzzzzzzz' }, 'after');
  await bad({ after: 'cursor.1:2' }, 'after');
  await bad({ limit: 0 }, 'limit');
  await bad({ limit: 501 }, 'limit');
  await bad({ venue_id: 'x' }, 'venue_id');
  await bad({ resource_id: randomUUID() }, 'resource_id');
  const stranger = await makePartner(database().db);
  const refused = await poll(server, stranger.apiKey, { venue_id: w.venueId, after: 'zzzzzzzzz' });
  t.is(refused.status, 403, 'the venue before the cursor’s position');
  t.is(refused.body.error, 'VENUE_NOT_AUTHORIZED');
});

// Serial: its pruning deletes every aged change of the log, another test's aged changes included.
test.serial(
  'a cursor expires for a venue once a change after it is older than the retention; a quiet venue’s never does',
  async (t) => {
    const { db } = database();
    const { w, cursor } = await world();
    const quiet = await world();
    await holdSlot(server, w, { index: 7 });
    await poll(server, w.apiKey, { venue_id: w.venueId, after: cursor });
    t.is((await poll(shortRetention, w.apiKey, { venue_id: w.venueId, after: cursor })).status, 200);
    await ageChanges(db, w.venueId);
    const expired = await poll(shortRetention, w.apiKey, { venue_id: w.venueId, after: cursor });
    t.is(expired.status, 410);
    t.is(expired.body.error, 'CURSOR_EXPIRED');
    t.deepEqual(
      expired.body.details.map((d: { field: string; in: string }) => [d.field, d.in]),
      [['after', 'query']],
    );
    assertDocumented(t, POLL, expired);
    t.is(
      (await poll(server, w.apiKey, { venue_id: w.venueId, after: cursor })).status,
      200,
      'each web by its own setting',
    );
    t.is(
      (await poll(shortRetention, quiet.w.apiKey, { venue_id: quiet.w.venueId, after: quiet.cursor })).status,
      200,
    );
    // Once deleted, still expired.
    const { rows } = await db.raw<{ rows: { n: number }[] }>(
      'select prune_availability_changes(60, 1000) as n',
    );
    t.true(rows[0]!.n >= 1);
    t.is((await poll(shortRetention, w.apiKey, { venue_id: w.venueId, after: cursor })).status, 410);
    t.is((await poll(server, w.apiKey, { venue_id: w.venueId, after: cursor })).status, 410, 'gone is gone');
  },
);

test('an event’s cursor at a quiet venue never expires: its change is not after it', async (t) => {
  const { db } = database();
  const { w, cursor } = await world();
  await holdWhole(t, w, 3);
  const { events } = await pollAll(server, w.apiKey, w.venueId, cursor);
  t.is(events.length, 3);
  // Older than the retention, as if made long ago (a change lists only resources older than it).
  await db('resources')
    .where({ venue_id: w.venueId })
    .update({ created_at: db.raw("now() - interval '1 hour'") });
  await ageChanges(db, w.venueId);
  // The last event a client read resumes the feed; one within the change lists the rest of it.
  const last = await poll(shortRetention, w.apiKey, {
    venue_id: w.venueId,
    after: events.at(-1)!.cursor as string,
  });
  t.is(last.status, 200, last.text);
  t.deepEqual(last.body.data, []);
  const within = await poll(shortRetention, w.apiKey, {
    venue_id: w.venueId,
    after: events[0]!.cursor as string,
  });
  t.is(within.status, 200, within.text);
  t.deepEqual(
    within.body.data.map((e: { cursor: string }) => e.cursor),
    events.slice(1).map((e) => e.cursor),
  );
  // A later change of the venue, older than the retention, expires them.
  await holdSlot(server, w, { index: 11 });
  await pollAll(server, w.apiKey, w.venueId, cursor);
  await ageChanges(db, w.venueId);
  const expired = await poll(shortRetention, w.apiKey, {
    venue_id: w.venueId,
    after: events.at(-1)!.cursor as string,
  });
  t.is(expired.status, 410, expired.text);
});

// Serial: it ages and deletes every change of the log.
test.serial(
  'retention deleting every change leaves the log’s position: cursors stay valid, snapshots go on from it',
  async (t) => {
    const { db } = database();
    const { w, date, cursor } = await world();
    const quiet = await world();
    await holdSlot(server, w, { index: 9 });
    // A poll positions the hold's change: the snapshot after it names the log's end past the change.
    t.is((await pollAll(server, w.apiKey, w.venueId, cursor)).events.length, 1);
    const before = await snapshotCursor(server, w.apiKey, w.venueId, date);
    t.not(before, '0');
    await ageChanges(db);
    for (;;) {
      const { rows } = await db.raw<{ rows: { n: number }[] }>(
        'select prune_availability_changes(60, 1000) as n',
      );
      if (rows[0]!.n < 1000) break;
    }
    t.is(Number((await db('availability_changes').count({ n: '*' }))[0]!.n), 0, 'every change deleted');
    const after = await snapshotCursor(server, w.apiKey, w.venueId, date);
    t.is(after, before, 'the snapshot names the same place, not the start of the log');
    for (const web of [server, shortRetention]) {
      const polled = await poll(web, w.apiKey, { venue_id: w.venueId, after });
      t.is(polled.status, 200, polled.text);
      t.deepEqual(polled.body.data, []);
      const quietly = await poll(web, quiet.w.apiKey, { venue_id: quiet.w.venueId, after: quiet.cursor });
      t.is(quietly.status, 200, `a quiet venue’s cursor never expires: ${quietly.text}`);
    }
    const stream = await openStream(server, w.apiKey, { venue_id: w.venueId });
    t.teardown(() => stream.close());
    await eventsArrive(stream, 1);
    t.is(stream.events()[0]!.id, before, 'a stream starts live at the same place');
  },
);

test('a release and an expiry each record one change; a refused or replayed hold records none', async (t) => {
  const { db } = database();
  const { w } = await world();
  const count = async () =>
    Number((await db('availability_changes').where({ venue_id: w.venueId }).count({ n: '*' }))[0]!.n);
  const key = randomUUID();
  const held = await holdSlot(server, w, { index: 9, body: { idempotency_key: key } });
  t.is(await count(), 1);
  await holdSlot(server, w, { index: 9, body: { idempotency_key: key } });
  t.is(await count(), 1, 'a replay records nothing');
  const refused = await hold(server, w.apiKey, {
    venue_id: w.venueId,
    resource_id: w.court,
    slot_start: held.slotStart,
  });
  t.is(refused.status, 409);
  t.is(await count(), 1, 'a refusal records nothing');
  await releaseHold(server, w, held.holdId);
  t.is(await count(), 2);
  await bookSlot(server, w, { index: 10 });
  t.is(await count(), 4);
});
