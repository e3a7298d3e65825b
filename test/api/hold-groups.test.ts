/**
 * Hold groups through the API: create, read, confirm and release, every item's reason, the order of
 * the checks, the idempotency rule shared with every write, and a grouped hold on the v1 routes.
 */
import test from 'ava';
import { randomUUID } from 'node:crypto';
import { insertBlackout, insertMembership, insertPriceRule } from '../../db/queries/booking-rules.ts';
import * as grants from '../../db/queries/venue-grants.ts';
import * as venues from '../../db/queries/venues.ts';
import { fingerprint } from '../../api/idempotency.ts';
import { confirm, gridSlots, hold, makeBookingWorld } from '../helpers/booking.ts';
import { useTestDatabase } from '../helpers/database.ts';
import { makePackage, makePartner, makeResource } from '../helpers/factories.ts';
import {
  confirmGroup,
  createGroup,
  itemOf,
  makeGroupOverdue,
  placeGroup,
  readGroup,
  releaseGroup,
  type Item,
} from '../helpers/hold-groups.ts';
import { call, useTestServer } from '../helpers/http.ts';
import { assertDocumented } from '../helpers/openapi.ts';
import { purchase } from '../helpers/packages.ts';

const database = useTestDatabase(test);
const server = useTestServer(test, database);

const CREATE = 'POST /bookings/hold-groups';
const READ = 'GET /bookings/hold-groups/{holdGroupId}';
const CONFIRM = 'POST /bookings/hold-groups/{holdGroupId}/confirm';
const RELEASE = 'POST /bookings/hold-groups/{holdGroupId}/cancel';

const later = (item: Item, minutes: number): Item => ({
  ...item,
  slot_start: new Date(Date.parse(item.slot_start) + minutes * 60_000).toISOString(),
});

test('a group holds every item as an ordinary hold: one expiry, item order, summed price, one job, hold_created each', async (t) => {
  const { db } = database();
  const w = await makeBookingWorld(db);
  const items = [
    await itemOf(db, w.venueId, w.court, 3),
    await itemOf(db, w.venueId, w.full, 0, { minutes: 120 }),
    await itemOf(db, w.venueId, w.court, 1),
  ];
  const res = await createGroup(server(), w.apiKey, { venue_id: w.venueId, items });
  t.is(res.status, 201, res.text);
  assertDocumented(t, CREATE, res);
  const group = res.body;
  t.is(group.venue_id, w.venueId);
  t.is(group.series_id, null);
  t.is(group.status, 'ACTIVE');
  t.is(group.price_rupees, 500 + 2 * 1800 + 500);
  t.deepEqual(
    group.holds.map((h: Record<string, unknown>) => [h.item_index, h.resource_id, h.slot_start, h.status]),
    items.map((item, i) => [i, item.resource_id, item.slot_start, 'ACTIVE']),
  );
  t.deepEqual(
    group.holds.map((h: Record<string, unknown>) => h.price_rupees),
    [500, 3600, 500],
  );
  t.is(group.holds[1].slot_end, new Date(Date.parse(items[1]!.slot_start) + 120 * 60_000).toISOString());
  t.true(group.holds.every((h: Record<string, unknown>) => h.booking_id === null));

  const holds = await db('holds').where({ hold_group_id: group.hold_group_id }).orderBy('item_index');
  t.deepEqual(
    holds.map((h) => h.id),
    group.holds.map((h: Record<string, unknown>) => h.hold_id),
  );
  t.true(holds.every((h) => h.hold_expiry_at.toISOString() === group.hold_expiry_at));
  // One expiry job for the group, none per hold.
  const jobs = await db.raw<{ rows: { name: string; n: number }[] }>(
    `select name, count(*)::int as n from pgboss.job
      where data->>'hold_group_id' = ? or data->>'hold_id' = any (?) group by name`,
    [group.hold_group_id, holds.map((h) => h.id)],
  );
  t.deepEqual(jobs.rows, [{ name: 'hold_group.expire', n: 1 }]);
  const events = await db('events')
    .whereIn(
      'hold_id',
      holds.map((h) => h.id),
    )
    .orderBy([{ column: 'tx' }, { column: 'seq' }]);
  t.deepEqual(
    events.map((e) => [e.event_type, e.hold_id, e.details.hold_group_id]),
    holds.map((h) => ['hold_created', h.id, group.hold_group_id]),
  );
  t.false('series_id' in events[0].details, 'a field that does not apply is absent');

  const read = await readGroup(server(), w.apiKey, group.hold_group_id);
  t.is(read.status, 200);
  assertDocumented(t, READ, read);
  t.deepEqual(read.body, group);

  // The windows are taken for everyone, the caller's own v1 holds included.
  const single = await hold(server(), w.apiKey, {
    venue_id: w.venueId,
    resource_id: w.halfA,
    slot_start: items[1]!.slot_start,
  });
  t.is(single.status, 409);
  t.is(single.body.error, 'TRANSFORMATION_CONFLICT');
});

test('validation: 400 naming nested fields as sent; 1 to 8 items; items overlapping each other, a whole and its part included', async (t) => {
  const { db } = database();
  const w = await makeBookingWorld(db);
  const a = await itemOf(db, w.venueId, w.court, 2);
  const invalid = async (body: Record<string, unknown>, fields: string[]) => {
    const res = await createGroup(server(), w.apiKey, { venue_id: w.venueId, ...body });
    t.is(res.status, 400, res.text);
    t.is(res.body.error, 'VALIDATION_ERROR');
    assertDocumented(t, CREATE, res);
    t.deepEqual(
      res.body.details.map((d: { field: string; in: string }) => `${d.in}:${d.field}`),
      fields.map((f) => `body:${f}`),
    );
    return res;
  };
  await invalid({ items: [] }, ['items']);
  await invalid({ items: Array.from({ length: 9 }, (_, i) => later(a, i * 60)) }, ['items']);
  await invalid({ items: [a, a, { ...a, slot_start: '2027-02-29T10:00:00Z' }] }, ['items.2.slot_start']);
  await invalid({ items: [a, { resource_id: w.court, slot_start: a.slot_start }] }, [
    'items.1.slot_duration_minutes',
  ]);
  await invalid({ items: [{ ...a, slot_duration_minutes: '60' }] }, ['items.0.slot_duration_minutes']);
  await invalid({ items: [{ ...a, resource_id: 'a\u0000b' }] }, ['items.0.resource_id']);
  await invalid({ items: 'all of them' }, ['items']);
  await invalid({ items: [a], idempotency_key: '' }, ['idempotency_key']);

  // Overlaps: the same window twice, a longer window over a later one, a whole over its part; every
  // later overlapping item is named, and windows that only touch are fine.
  const full = await itemOf(db, w.venueId, w.full, 4, { minutes: 120 });
  const half = { ...full, resource_id: w.halfB, slot_duration_minutes: 60 };
  const res = await invalid(
    {
      items: [
        { ...a, slot_duration_minutes: 120 },
        later(a, 60),
        full,
        later(a, 120),
        later(half, 60),
        { ...a, resource_id: a.resource_id.toUpperCase() },
      ],
    },
    ['items.1', 'items.4', 'items.5'],
  );
  t.regex(res.body.details[0].message, /overlaps/);
  const touching = await createGroup(server(), w.apiKey, {
    venue_id: w.venueId,
    items: [a, later(a, 60), full, later(half, 120)],
  });
  t.is(touching.status, 201, touching.text);

  // Malformed comes before the venue (the contract's order): a whole over its part is a 400 for a
  // partner the venue is not granted to, as for one it is.
  const stranger = await makePartner(db);
  const foreign = await createGroup(server(), stranger.apiKey, { venue_id: w.venueId, items: [full, half] });
  t.is(foreign.status, 400, foreign.text);
  t.deepEqual(
    foreign.body.details.map((d: { field: string }) => d.field),
    ['items.1'],
  );
});

test('every failing item is named with its reason, nothing is held, and the status follows the reasons', async (t) => {
  const { db } = database();
  const w = await makeBookingWorld(db, { maxAdvanceDays: 5 });
  const slots = await gridSlots(db, w.venueId, w.court, 1);
  const at = (n: number) => slots[n]!.slot_start.toISOString();
  const court = (start: string, minutes = 60): Item => ({
    resource_id: w.court,
    slot_start: start,
    slot_duration_minutes: minutes,
  });
  const shift = (start: string, ms: number) => new Date(Date.parse(start) + ms).toISOString();
  const closed = await makeResource(db, { venueId: w.venueId, closedOn: [1, 2, 3, 4, 5, 6, 7] });
  const [blackStart] = [at(9)];
  await insertBlackout(db, {
    venueId: w.venueId,
    resourceId: null,
    unitIds: [w.court],
    from: new Date(blackStart),
    to: new Date(Date.parse(blackStart) + 60_000),
    reason: 'repairs',
  });
  // Taken by another partner's hold; a whole whose part another partner holds.
  const rival = await makePartner(db, { rateLimit: 100_000 });
  await grants.grant(db, rival.partnerId, w.venueId);
  const taken = await hold(server(), rival.apiKey, {
    venue_id: w.venueId,
    resource_id: w.court,
    slot_start: at(10),
  });
  t.is(taken.status, 201);
  const part = await hold(server(), rival.apiKey, {
    venue_id: w.venueId,
    resource_id: w.halfA,
    slot_start: at(0),
  });
  t.is(part.status, 201);

  const items: [Item, string | null][] = [
    [court(at(1)), null],
    [{ ...court(at(2)), resource_id: randomUUID() }, 'UNKNOWN_RESOURCE'],
    [{ ...court(at(2)), resource_id: 'court-one' }, 'UNKNOWN_RESOURCE'],
    [court(shift(at(3), 15 * 60_000)), 'NOT_ON_GRID'],
    [court(at(7), 90), 'NOT_ON_GRID'],
    [court(slots.at(-1)!.slot_start.toISOString(), 120), 'NOT_ON_GRID'],
    [court(shift(at(5), -2 * 86_400_000)), 'IN_PAST'],
    [court(shift(at(5), 7 * 86_400_000)), 'BEYOND_BOOKING_WINDOW'],
    [{ ...court(at(6)), resource_id: closed }, 'CLOSED'],
    [court(at(9)), 'BLACKOUT'],
    [court(at(10)), 'TAKEN'],
    [{ ...court(at(0)), resource_id: w.full }, 'TRANSFORMATION_CONFLICT'],
  ];
  const before = await db('holds').where({ venue_id: w.venueId }).count({ n: '*' });
  const key = randomUUID();
  const res = await createGroup(server(), w.apiKey, {
    venue_id: w.venueId,
    items: items.map(([item]) => item).slice(0, 8),
    idempotency_key: key,
  });
  t.is(res.status, 400, res.text);
  t.is(res.body.error, 'SLOT_NOT_AVAILABLE');
  assertDocumented(t, CREATE, res);
  t.deepEqual(
    res.body.details.map((d: Record<string, unknown>) => [d.field, d.in, d.reason]),
    items
      .slice(0, 8)
      .map(([, reason], i) => [`items.${i}`, 'body', reason])
      .filter(([, , reason]) => reason !== null),
  );
  t.true(res.body.details.every((d: { message: string }) => d.message.length > 10));
  const rest = await createGroup(server(), w.apiKey, {
    venue_id: w.venueId,
    items: [items[0]![0], ...items.slice(8).map(([item]) => item)],
  });
  t.is(rest.status, 400, rest.text);
  t.deepEqual(
    rest.body.details.map((d: Record<string, unknown>) => [d.field, d.reason]),
    [
      ['items.1', 'CLOSED'],
      ['items.2', 'BLACKOUT'],
      ['items.3', 'TAKEN'],
      ['items.4', 'TRANSFORMATION_CONFLICT'],
    ],
  );
  t.deepEqual(await db('holds').where({ venue_id: w.venueId }).count({ n: '*' }), before, 'nothing held');

  // Only taken windows: 409 SLOT_NOT_AVAILABLE; only conflicts: 409 TRANSFORMATION_CONFLICT.
  const takenOnly = await createGroup(server(), w.apiKey, {
    venue_id: w.venueId,
    items: [court(at(1)), court(at(10)), { ...court(at(0)), resource_id: w.full }],
  });
  t.is(takenOnly.status, 409);
  t.is(takenOnly.body.error, 'SLOT_NOT_AVAILABLE');
  t.deepEqual(
    takenOnly.body.details.map((d: Record<string, unknown>) => [d.field, d.reason]),
    [
      ['items.1', 'TAKEN'],
      ['items.2', 'TRANSFORMATION_CONFLICT'],
    ],
  );
  assertDocumented(t, CREATE, takenOnly);
  const conflictOnly = await createGroup(server(), w.apiKey, {
    venue_id: w.venueId,
    items: [{ ...court(at(0)), resource_id: w.full }, court(at(1))],
  });
  t.is(conflictOnly.status, 409);
  t.is(conflictOnly.body.error, 'TRANSFORMATION_CONFLICT');
  t.deepEqual(
    conflictOnly.body.details.map((d: Record<string, unknown>) => d.field),
    ['items.0'],
  );

  // The refused request stored no key: the same key now holds what is free.
  const retry = await createGroup(server(), w.apiKey, {
    venue_id: w.venueId,
    items: [court(at(1))],
    idempotency_key: key,
  });
  t.is(retry.status, 201, retry.text);

  // Lead time and a paused venue, judged per item too.
  await db('venues')
    .where({ id: w.venueId })
    .update({ min_lead_minutes: 3 * 24 * 60 });
  const lead = await createGroup(server(), w.apiKey, { venue_id: w.venueId, items: [court(at(2))] });
  t.deepEqual(
    lead.body.details.map((d: Record<string, unknown>) => d.reason),
    ['LEAD_TIME'],
  );
  await db('venues').where({ id: w.venueId }).update({ min_lead_minutes: 0 });
  await venues.setStatus(db, w.venueId, 'paused');
  const paused = await createGroup(server(), w.apiKey, { venue_id: w.venueId, items: [court(at(2))] });
  t.deepEqual(
    paused.body.details.map((d: Record<string, unknown>) => d.reason),
    ['CLOSED'],
  );
});

test('a venue not granted, archived or missing is 403 before the key and the items are looked at', async (t) => {
  const { db } = database();
  const w = await makeBookingWorld(db);
  const item = await itemOf(db, w.venueId, w.court, 0);
  const stranger = await makePartner(db);
  const notGranted = await createGroup(server(), stranger.apiKey, { venue_id: w.venueId, items: [item] });
  t.is(notGranted.status, 403);
  t.is(notGranted.body.error, 'VENUE_NOT_AUTHORIZED');
  assertDocumented(t, CREATE, notGranted);
  const missing = await createGroup(server(), w.apiKey, { venue_id: randomUUID(), items: [item] });
  t.is(missing.body.error, 'VENUE_NOT_AUTHORIZED');
  // A key used before is not replayed, nor mismatched, at a venue that is not the caller's.
  const key = randomUUID();
  t.is(
    (await createGroup(server(), w.apiKey, { venue_id: w.venueId, items: [item], idempotency_key: key }))
      .status,
    201,
  );
  await venues.setStatus(db, w.venueId, 'archived');
  const archived = await createGroup(server(), w.apiKey, {
    venue_id: w.venueId,
    items: [later(item, 60)],
    idempotency_key: key,
  });
  t.is(archived.status, 403);
  t.is(archived.body.error, 'VENUE_NOT_AUTHORIZED');
});

test('prices: price rules and the membership discount apply to each item as to a single hold', async (t) => {
  const { db } = database();
  const w = await makeBookingWorld(db);
  await insertPriceRule(db, {
    resourceId: w.court,
    priceRupees: 800,
    days: null,
    fromTime: '07:00',
    toTime: '09:00',
    onDate: null,
  });
  await insertMembership(db, {
    venueId: w.venueId,
    customerPhone: '+919812345678',
    discountPercent: 15,
    expiresAt: null,
  });
  const items = [
    await itemOf(db, w.venueId, w.court, 0, { minutes: 180 }),
    await itemOf(db, w.venueId, w.full, 2, { daysAhead: 2 }),
  ];
  // What single holds of the same windows cost, released again.
  const single: number[] = [];
  for (const item of items) {
    const res = await hold(server(), w.apiKey, {
      venue_id: w.venueId,
      ...item,
      customer_phone: '9812345678',
    });
    t.is(res.status, 201, res.text);
    single.push(res.body.price_rupees);
    await call(server(), 'POST', `/api/v1/partner/holds/${res.body.hold_id}/cancel`, {
      key: w.apiKey,
      body: { idempotency_key: randomUUID() },
    });
  }
  t.deepEqual(single, [Math.round((500 + 800 + 800) * 0.85), Math.round(1800 * 0.85)]);
  const res = await createGroup(server(), w.apiKey, {
    venue_id: w.venueId,
    items,
    customer_phone: '9812345678',
  });
  t.is(res.status, 201, res.text);
  t.deepEqual(
    res.body.holds.map((h: { price_rupees: number }) => h.price_rupees),
    single,
  );
  t.is(res.body.price_rupees, single[0]! + single[1]!);
});

test('confirm: every hold becomes a booking in item order, with one payment reference; the bookings name the group', async (t) => {
  const { db } = database();
  const w = await makeBookingWorld(db);
  const items = [await itemOf(db, w.venueId, w.court, 5), await itemOf(db, w.venueId, w.halfA, 5)];
  const { groupId, holdIds } = await placeGroup(server(), w, items);
  const res = await confirmGroup(server(), w.apiKey, groupId, { payment_reference: 'upi-group-9' });
  t.is(res.status, 201, res.text);
  assertDocumented(t, CONFIRM, res);
  t.is(res.body.hold_group_id, groupId);
  t.is(res.body.status, 'CONFIRMED');
  t.is(res.body.price_rupees, 1500);
  t.false('package_credits_consumed' in res.body, 'present only when the request asks for credits');
  t.deepEqual(
    res.body.bookings.map((b: Record<string, unknown>) => [
      b.item_index,
      b.hold_id,
      b.status,
      b.payment_method,
      b.package_purchase_id,
    ]),
    [
      [0, holdIds[0], 'BOOKED', null, null],
      [1, holdIds[1], 'BOOKED', null, null],
    ],
  );
  const bookingIds = res.body.bookings.map((b: { booking_id: string }) => b.booking_id);
  for (const [i, bookingId] of bookingIds.entries()) {
    const detail = await call(server(), 'GET', `/api/v1/bookings/${bookingId}`, { key: w.apiKey });
    t.is(detail.body.hold_group_id, groupId);
    t.is(detail.body.series_id, null);
    t.is(detail.body.payment_reference, 'upi-group-9');
    t.is(detail.body.resource_id, items[i]!.resource_id);
    assertDocumented(t, 'GET /bookings/{bookingId}', detail);
  }
  const events = await db('events')
    .whereIn('booking_id', bookingIds)
    .orderBy([{ column: 'tx' }, { column: 'seq' }]);
  t.deepEqual(
    events.map((e) => [e.event_type, e.booking_id, e.details.hold_group_id]),
    bookingIds.map((id: string) => ['booking_created', id, groupId]),
  );

  // Read after the confirm: each hold shows its booking's status. Cancel one booking the v1 way.
  const cancel = await call(server(), 'POST', `/api/v1/bookings/${bookingIds[1]}/cancel`, {
    key: w.apiKey,
    body: { idempotency_key: randomUUID() },
  });
  t.is(cancel.status, 200);
  const cancelledEvent = await db('events')
    .where({ booking_id: bookingIds[1], event_type: 'booking_cancelled' })
    .first();
  t.is(cancelledEvent.details.hold_group_id, groupId);
  const read = await readGroup(server(), w.apiKey, groupId);
  t.is(read.body.status, 'CONFIRMED', 'a CONFIRMED group stays so');
  t.deepEqual(
    read.body.holds.map((h: Record<string, unknown>) => [h.status, h.booking_id]),
    [
      ['BOOKED', bookingIds[0]],
      ['CANCELLED', bookingIds[1]],
    ],
  );
  assertDocumented(t, READ, read);

  const again = await confirmGroup(server(), w.apiKey, groupId);
  t.is(again.status, 409);
  t.is(again.body.error, 'INVALID_HOLD_STATE');
  assertDocumented(t, CONFIRM, again);
  const release = await releaseGroup(server(), w.apiKey, groupId);
  t.is(release.status, 409);
  t.is(release.body.error, 'INVALID_HOLD_STATE');

  // The booking list names the group too; the series filter checks its input.
  const list = await call(server(), 'GET', '/api/v1/bookings?limit=100', { key: w.apiKey });
  t.deepEqual(
    list.body.bookings.filter((b: { hold_group_id: string | null }) => b.hold_group_id === groupId).length,
    2,
  );
  const series = await call(server(), 'GET', `/api/v1/bookings?series_id=${randomUUID()}`, { key: w.apiKey });
  t.deepEqual(series.body, { bookings: [], has_more: false });
  const badSeries = await call(server(), 'GET', '/api/v1/bookings?series_id=weekly', { key: w.apiKey });
  t.is(badSeries.status, 400);
  t.deepEqual(
    badSeries.body.details.map((d: { field: string; in: string }) => [d.field, d.in]),
    [['series_id', 'query']],
  );
});

test('confirm with package credits: one per hold, all or none, the purchase expiring first first', async (t) => {
  const { db } = database();
  const w = await makeBookingWorld(db);
  const packageId = await makePackage(db, { venueId: w.venueId, credits: 2, validDays: 30 });
  const longer = await makePackage(db, { venueId: w.venueId, credits: 5, validDays: 60 });
  const soon = await purchase(server(), w.apiKey, packageId);
  const late = await purchase(server(), w.apiKey, longer);
  t.is(soon.status, 201, soon.text);
  t.is(late.status, 201, late.text);
  const items = [0, 1, 2].map((i) => itemOf(db, w.venueId, w.court, 6 + i));
  const first = await placeGroup(server(), w, await Promise.all(items));
  const res = await confirmGroup(server(), w.apiKey, first.groupId, { use_package_credit: true });
  t.is(res.status, 201, res.text);
  t.is(res.body.package_credits_consumed, 3);
  t.deepEqual(
    res.body.bookings.map((b: Record<string, unknown>) => [b.payment_method, b.package_purchase_id]),
    [
      ['package', soon.body.purchase.id],
      ['package', soon.body.purchase.id],
      ['package', late.body.purchase.id],
    ],
  );
  const remaining = async () =>
    Object.fromEntries(
      (await db('package_purchases').whereIn('id', [soon.body.purchase.id, late.body.purchase.id])).map(
        (p) => [p.id, p.credits_remaining],
      ),
    );
  t.deepEqual(await remaining(), { [soon.body.purchase.id]: 0, [late.body.purchase.id]: 4 });

  // Five holds, four credits left: none is taken, every booking is paid.
  const five = await Promise.all(
    [0, 1, 2, 3, 4].map((i) => itemOf(db, w.venueId, w.court, i, { daysAhead: 2 })),
  );
  const second = await placeGroup(server(), w, five);
  const paid = await confirmGroup(server(), w.apiKey, second.groupId, { use_package_credit: true });
  t.is(paid.status, 201, paid.text);
  t.is(paid.body.package_credits_consumed, 0);
  t.true(
    paid.body.bookings.every(
      (b: Record<string, unknown>) => b.payment_method === null && b.package_purchase_id === null,
    ),
  );
  t.deepEqual(await remaining(), { [soon.body.purchase.id]: 0, [late.body.purchase.id]: 4 });
  // Asked not to: 0, and present.
  const third = await placeGroup(server(), w, [await itemOf(db, w.venueId, w.court, 6, { daysAhead: 2 })]);
  const declined = await confirmGroup(server(), w.apiKey, third.groupId, { use_package_credit: false });
  t.is(declined.body.package_credits_consumed, 0);
  assertDocumented(t, CONFIRM, declined);
});

test('confirm of member-priced holds must carry the member: else 400 naming customer_phone', async (t) => {
  const { db } = database();
  const w = await makeBookingWorld(db);
  await insertMembership(db, {
    venueId: w.venueId,
    customerPhone: '+919812345678',
    discountPercent: 10,
    expiresAt: null,
  });
  const { groupId } = await placeGroup(server(), w, [await itemOf(db, w.venueId, w.court, 7)], {
    customer_phone: '9812345678',
  });
  const other = await confirmGroup(server(), w.apiKey, groupId, { customer_phone: '+919999999999' });
  t.is(other.status, 400);
  t.is(other.body.error, 'VALIDATION_ERROR');
  t.deepEqual(
    other.body.details.map((d: { field: string; in: string }) => [d.field, d.in]),
    [['customer_phone', 'body']],
  );
  assertDocumented(t, CONFIRM, other);
  const member = await confirmGroup(server(), w.apiKey, groupId, {
    customer_phone: '+91 98123 45678'.replace(/ /g, ''),
  });
  t.is(member.status, 201, member.text);
});

test('release: every hold CANCELLED in one go, every window free, hold_cancelled each; then confirm and release are 409', async (t) => {
  const { db } = database();
  const w = await makeBookingWorld(db);
  const items = [await itemOf(db, w.venueId, w.court, 8), await itemOf(db, w.venueId, w.full, 8)];
  const { groupId, holdIds } = await placeGroup(server(), w, items);
  const res = await releaseGroup(server(), w.apiKey, groupId, { reason: 'changed plans' });
  t.is(res.status, 200, res.text);
  assertDocumented(t, RELEASE, res);
  t.is(res.body.status, 'CANCELLED');
  t.deepEqual(
    res.body.holds.map((h: Record<string, unknown>) => h.status),
    ['CANCELLED', 'CANCELLED'],
  );
  t.deepEqual(
    (
      await db('events').whereIn('hold_id', holdIds).where({ event_type: 'hold_cancelled' }).orderBy('seq')
    ).map((e) => [e.hold_id, e.details.hold_group_id]),
    holdIds.map((id) => [id, groupId]),
  );
  for (const item of items) {
    const again = await hold(server(), w.apiKey, { venue_id: w.venueId, ...item });
    t.is(again.status, 201, `the window is free: ${again.text}`);
  }
  const confirmAfter = await confirmGroup(server(), w.apiKey, groupId);
  t.is(confirmAfter.status, 409);
  t.is(confirmAfter.body.error, 'INVALID_HOLD_STATE');
  const releaseAfter = await releaseGroup(server(), w.apiKey, groupId);
  t.is(releaseAfter.body.error, 'INVALID_HOLD_STATE');
  assertDocumented(t, RELEASE, releaseAfter);
});

test('an expired group reads EXPIRED and its confirm and release are 409 HOLD_EXPIRED before any job runs', async (t) => {
  const { db } = database();
  const w = await makeBookingWorld(db);
  const items = [await itemOf(db, w.venueId, w.court, 9), await itemOf(db, w.venueId, w.halfB, 9)];
  const { groupId } = await placeGroup(server(), w, items);
  await makeGroupOverdue(db, groupId);
  const read = await readGroup(server(), w.apiKey, groupId);
  t.is(read.body.status, 'EXPIRED');
  t.deepEqual(
    read.body.holds.map((h: { status: string }) => h.status),
    ['EXPIRED', 'EXPIRED'],
  );
  for (const res of [
    await confirmGroup(server(), w.apiKey, groupId),
    await releaseGroup(server(), w.apiKey, groupId),
  ]) {
    t.is(res.status, 409);
    t.is(res.body.error, 'HOLD_EXPIRED');
  }
  t.is((await db('hold_groups').where({ id: groupId }).first()).status, 'ACTIVE', 'no job ran');
});

test('a path id in upper case is the same path id: the same key and body replay the release', async (t) => {
  const { db } = database();
  const w = await makeBookingWorld(db);
  const { groupId } = await placeGroup(server(), w, [await itemOf(db, w.venueId, w.court, 11)]);
  const key = randomUUID();
  const first = await releaseGroup(server(), w.apiKey, groupId.toUpperCase(), { idempotency_key: key });
  t.is(first.status, 200, first.text);
  t.is(first.body.hold_group_id, groupId);
  const again = await releaseGroup(server(), w.apiKey, groupId, { idempotency_key: key });
  t.is(again.status, 200, again.text);
  t.deepEqual(again.body, first.body);
});

test('access on every route: a bad id 400 in path, unknown 404, another partner 403, then the venue grant', async (t) => {
  const { db } = database();
  const w = await makeBookingWorld(db);
  const { groupId } = await placeGroup(server(), w, [await itemOf(db, w.venueId, w.court, 10)]);
  const routes = [
    (id: string, key: string) => readGroup(server(), key, id),
    (id: string, key: string) => confirmGroup(server(), key, id),
    (id: string, key: string) => releaseGroup(server(), key, id),
  ];
  const names = [READ, CONFIRM, RELEASE];
  // The body before the id: a bad body is answered alone, whatever the id.
  for (const action of ['confirm', 'cancel']) {
    const both = await call(server(), 'POST', `/api/v1/bookings/hold-groups/not-a-uuid/${action}`, {
      key: w.apiKey,
      body: {},
    });
    t.is(both.status, 400);
    t.true(
      both.body.details.length > 0 && both.body.details.every((d: { in: string }) => d.in === 'body'),
      both.text,
    );
  }
  const stranger = await makePartner(db);
  for (const [i, route] of routes.entries()) {
    const bad = await route('not-a-uuid', w.apiKey);
    t.is(bad.status, 400);
    t.deepEqual(
      bad.body.details.map((d: { field: string; in: string }) => [d.field, d.in]),
      [['holdGroupId', 'path']],
    );
    const unknown = await route(randomUUID(), w.apiKey);
    t.is(unknown.status, 404);
    t.is(unknown.body.error, 'HOLD_GROUP_NOT_FOUND');
    assertDocumented(t, names[i]!, unknown);
    const foreign = await route(groupId, stranger.apiKey);
    t.is(foreign.status, 403);
    t.is(foreign.body.error, 'UNAUTHORIZED');
    assertDocumented(t, names[i]!, foreign);
  }
  // The body is checked first, before the id.
  const both = await call(server(), 'POST', '/api/v1/bookings/hold-groups/not-a-uuid/cancel', {
    key: w.apiKey,
    body: { reason: 'x'.repeat(501) },
  });
  t.is(both.status, 400);

  await grants.revoke(db, w.partnerId, w.venueId);
  const read = await readGroup(server(), w.apiKey, groupId);
  t.is(read.status, 200, 'the owner still reads its group');
  for (const res of [
    await confirmGroup(server(), w.apiKey, groupId),
    await releaseGroup(server(), w.apiKey, groupId),
  ]) {
    t.is(res.status, 403);
    t.is(res.body.error, 'VENUE_NOT_AUTHORIZED');
  }
});

test('a grouped hold on the v1 routes: 409 HOLD_IN_GROUP naming the group, after ownership, venue and key checks', async (t) => {
  const { db } = database();
  const w = await makeBookingWorld(db);
  const { groupId, holdIds } = await placeGroup(server(), w, [await itemOf(db, w.venueId, w.court, 11)]);
  const holdId = holdIds[0]!;
  const v1Release = (key: string, idempotencyKey = randomUUID()) =>
    call(server(), 'POST', `/api/v1/partner/holds/${holdId}/cancel`, {
      key,
      body: { idempotency_key: idempotencyKey },
    });

  const confirmed = await confirm(server(), w.apiKey, { hold_id: holdId });
  t.is(confirmed.status, 409);
  t.is(confirmed.body.error, 'HOLD_IN_GROUP');
  t.is(confirmed.body.hold_group_id, groupId);
  assertDocumented(t, 'POST /bookings/confirm', confirmed);
  const released = await v1Release(w.apiKey);
  t.is(released.status, 409);
  t.is(released.body.error, 'HOLD_IN_GROUP');
  t.is(released.body.hold_group_id, groupId);
  assertDocumented(t, 'POST /partner/holds/{holdId}/cancel', released);

  // Ownership first.
  const stranger = await makePartner(db);
  t.is((await confirm(server(), stranger.apiKey, { hold_id: holdId })).body.error, 'UNAUTHORIZED');
  t.is((await v1Release(stranger.apiKey)).body.error, 'UNAUTHORIZED');
  // A key used for another operation: the mismatch first.
  const used = randomUUID();
  t.is((await releaseGroup(server(), w.apiKey, randomUUID(), { idempotency_key: used })).status, 404);
  const other = await hold(server(), w.apiKey, {
    venue_id: w.venueId,
    ...(await itemOf(db, w.venueId, w.court, 12)),
    idempotency_key: used,
  });
  t.is(other.status, 201);
  t.is(
    (await confirm(server(), w.apiKey, { hold_id: holdId, idempotency_key: used })).body.error,
    'IDEMPOTENCY_KEY_MISMATCH',
  );
  t.is((await v1Release(w.apiKey, used)).body.error, 'IDEMPOTENCY_KEY_MISMATCH');
  // In any state: expired too.
  await makeGroupOverdue(db, groupId);
  t.is((await confirm(server(), w.apiKey, { hold_id: holdId })).body.error, 'HOLD_IN_GROUP');
  t.is((await v1Release(w.apiKey)).body.error, 'HOLD_IN_GROUP');
  // Venue next.
  await grants.revoke(db, w.partnerId, w.venueId);
  t.is((await confirm(server(), w.apiKey, { hold_id: holdId })).body.error, 'VENUE_NOT_AUTHORIZED');
  t.is((await v1Release(w.apiKey)).body.error, 'VENUE_NOT_AUTHORIZED');
});

test('idempotency: the same key and request replays; any other request with it, v1 operations included, is 409', async (t) => {
  const { db } = database();
  const w = await makeBookingWorld(db);
  const items = [await itemOf(db, w.venueId, w.court, 13), await itemOf(db, w.venueId, w.halfA, 13)];
  const key = randomUUID();
  const body = { venue_id: w.venueId, items, customer_phone: '9812345678', idempotency_key: key };
  const first = await createGroup(server(), w.apiKey, body);
  t.is(first.status, 201, first.text);
  // The same body, members in another order, and an ignored member: the original group.
  const reordered = {
    idempotency_key: key,
    partner_id: randomUUID(),
    customer_phone: '9812345678',
    items: items.map(({ slot_duration_minutes, slot_start, resource_id }) => ({
      slot_duration_minutes,
      slot_start,
      resource_id,
    })),
    venue_id: w.venueId,
  };
  const replay = await createGroup(server(), w.apiKey, reordered);
  t.is(replay.status, 201);
  t.deepEqual(replay.body, first.body);
  t.is(
    await db('hold_groups')
      .where({ partner_id: w.partnerId })
      .count({ n: '*' })
      .then((r) => Number(r[0]!.n)),
    1,
  );
  const mismatch = (res: Awaited<ReturnType<typeof createGroup>>, why: string) => {
    t.is(res.status, 409, `${why}: ${res.text}`);
    t.is(res.body.error, 'IDEMPOTENCY_KEY_MISMATCH', why);
  };
  mismatch(await createGroup(server(), w.apiKey, { ...body, items: [items[0]] }), 'another body');
  mismatch(
    await createGroup(server(), w.apiKey, { ...body, items: [items[1], items[0]] }),
    'items in another order',
  );
  // Bodies equal as JSON, not as what they come to once normalised.
  mismatch(
    await createGroup(server(), w.apiKey, { ...body, customer_phone: '+919812345678' }),
    'the same phone written another way',
  );
  const inKolkata = (instant: string) =>
    new Date(Date.parse(instant) + 330 * 60_000).toISOString().replace('Z', '+05:30');
  mismatch(
    await createGroup(server(), w.apiKey, {
      ...body,
      items: [{ ...items[0]!, slot_start: inKolkata(items[0]!.slot_start) }, items[1]],
    }),
    'the same instant written with another offset',
  );
  mismatch(
    await hold(server(), w.apiKey, { venue_id: w.venueId, ...items[0]!, idempotency_key: key }),
    'a v1 hold',
  );
  mismatch(
    await confirmGroup(server(), w.apiKey, first.body.hold_group_id, { idempotency_key: key }),
    'a confirm',
  );
  // A v1 hold's key on a group create.
  const v1 = await hold(server(), w.apiKey, {
    venue_id: w.venueId,
    ...(await itemOf(db, w.venueId, w.court, 14)),
  });
  const v1Key = randomUUID();
  const v1Again = await hold(server(), w.apiKey, {
    venue_id: w.venueId,
    ...(await itemOf(db, w.venueId, w.court, 15)),
    idempotency_key: v1Key,
  });
  t.is(v1.status, 201);
  t.is(v1Again.status, 201);
  mismatch(
    await createGroup(server(), w.apiKey, {
      venue_id: w.venueId,
      items: [await itemOf(db, w.venueId, w.court, 15)],
      idempotency_key: v1Key,
    }),
    'a group create with a v1 hold key',
  );

  // Confirm: same key and request replays 201 with the same body; another group id or body is 409.
  const groupId = first.body.hold_group_id as string;
  const confirmKey = randomUUID();
  const confirmBody = { idempotency_key: confirmKey, customer_phone: '9812345678', payment_reference: 'p-1' };
  const confirmed = await confirmGroup(server(), w.apiKey, groupId, confirmBody);
  t.is(confirmed.status, 201, confirmed.text);
  const confirmedAgain = await confirmGroup(server(), w.apiKey, groupId, { ...confirmBody });
  t.is(confirmedAgain.status, 201);
  t.deepEqual(confirmedAgain.body, confirmed.body);
  mismatch(
    await confirmGroup(server(), w.apiKey, groupId, { ...confirmBody, payment_reference: 'p-2' }),
    'another body',
  );
  mismatch(
    await confirmGroup(server(), w.apiKey, groupId, { ...confirmBody, payment_reference: ' p-1 ' }),
    'free text that trims to the same',
  );
  const otherGroup = await placeGroup(server(), w, [
    await itemOf(db, w.venueId, w.court, 14, { daysAhead: 2 }),
  ]);
  mismatch(await confirmGroup(server(), w.apiKey, otherGroup.groupId, confirmBody), 'another path id');
  mismatch(
    await confirm(server(), w.apiKey, { hold_id: v1.body.hold_id, idempotency_key: confirmKey }),
    'a v1 confirm',
  );

  // Release: replays 200 with the same body; a key of a release on another group is 409.
  const releaseKey = randomUUID();
  const released = await releaseGroup(server(), w.apiKey, otherGroup.groupId, {
    idempotency_key: releaseKey,
  });
  t.is(released.status, 200);
  const releasedAgain = await releaseGroup(server(), w.apiKey, otherGroup.groupId, {
    idempotency_key: releaseKey,
  });
  t.is(releasedAgain.status, 200);
  t.deepEqual(releasedAgain.body, released.body);
  mismatch(
    await releaseGroup(server(), w.apiKey, otherGroup.groupId, {
      idempotency_key: releaseKey,
      reason: 'another',
    }),
    'another reason',
  );
  mismatch(await releaseGroup(server(), w.apiKey, groupId, { idempotency_key: releaseKey }), 'another group');
  mismatch(
    await call(server(), 'POST', `/api/v1/partner/holds/${v1.body.hold_id}/cancel`, {
      key: w.apiKey,
      body: { idempotency_key: releaseKey },
    }),
    'a v1 release',
  );

  // A key the release before this one stored, under its print (the parsed body without its key),
  // still replays for its request, and only for it.
  const earlierKey = randomUUID();
  const third = await placeGroup(server(), w, [await itemOf(db, w.venueId, w.court, 15, { daysAhead: 2 })]);
  const releasedEarlier = await releaseGroup(server(), w.apiKey, third.groupId, {
    idempotency_key: earlierKey,
  });
  t.is(releasedEarlier.status, 200);
  await db('idempotency_keys')
    .where({ partner_id: w.partnerId, key: earlierKey })
    .update({ fingerprint: fingerprint({ holdGroupId: third.groupId, body: {} }) });
  const replayedEarlier = await releaseGroup(server(), w.apiKey, third.groupId, {
    idempotency_key: earlierKey,
  });
  t.is(replayedEarlier.status, 200, replayedEarlier.text);
  t.deepEqual(replayedEarlier.body, releasedEarlier.body);
  mismatch(
    await releaseGroup(server(), w.apiKey, third.groupId, { idempotency_key: earlierKey, reason: 'x' }),
    'another request under a key of the release before',
  );
});

test('a group of 8 counts one request against the rate limit; 413 and 415 as on every route', async (t) => {
  const { db } = database();
  const { partnerId, apiKey } = await makePartner(db, { rateLimit: 3 });
  const w = await makeBookingWorld(db);
  await grants.grant(db, partnerId, w.venueId);
  const items = await Promise.all(
    Array.from({ length: 8 }, (_, i) => itemOf(db, w.venueId, w.court, i, { daysAhead: 3 })),
  );
  const res = await createGroup(server(), apiKey, { venue_id: w.venueId, items });
  t.is(res.status, 201, res.text);
  t.is(res.headers.get('x-ratelimit-remaining'), '2');
  const read = await readGroup(server(), apiKey, res.body.hold_group_id);
  t.is(read.headers.get('x-ratelimit-remaining'), '1');
  await readGroup(server(), apiKey, res.body.hold_group_id);
  const limited = await readGroup(server(), apiKey, res.body.hold_group_id);
  t.is(limited.status, 429);
  assertDocumented(t, READ, limited);

  const tooLarge = await call(server(), 'POST', '/api/v1/bookings/hold-groups', {
    key: w.apiKey,
    rawBody: JSON.stringify({ venue_id: w.venueId, items: [], pad: 'x'.repeat(70 * 1024) }),
    headers: { 'content-type': 'application/json' },
  });
  t.is(tooLarge.status, 413);
  assertDocumented(t, CREATE, tooLarge);
  const text = await call(server(), 'POST', '/api/v1/bookings/hold-groups', {
    key: w.apiKey,
    rawBody: 'venue_id=1',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
  });
  t.is(text.status, 415);
  assertDocumented(t, CREATE, text);
});

test('an instant past the year 9999 in UTC (9999 written with an offset) is refused as off the grid, as for a single hold', async (t) => {
  const { db } = database();
  const w = await makeBookingWorld(db);
  const lastInstant = '9999-12-31T23:00:00-05:00'; // 10000-01-01T04:00Z
  const group = await createGroup(server(), w.apiKey, {
    venue_id: w.venueId,
    items: [{ resource_id: w.court, slot_start: lastInstant, slot_duration_minutes: 60 }],
  });
  const single = await hold(server(), w.apiKey, {
    venue_id: w.venueId,
    resource_id: w.court,
    slot_start: lastInstant,
  });
  t.is(single.status, 400);
  t.is(group.status, 400, group.text);
  t.is(group.body.error, 'SLOT_NOT_AVAILABLE');
  t.like(group.body.details, [{ field: 'items.0', in: 'body', reason: 'NOT_ON_GRID' }]);
  t.is(single.body.error, 'SLOT_NOT_AVAILABLE', 'the same answer as a single hold');
  assertDocumented(t, CREATE, group);
  t.is(
    await db('holds')
      .where({ venue_id: w.venueId })
      .count()
      .first()
      .then((r) => Number(r!.count)),
    0,
  );
});
