import test from 'ava';
import { fingerprint } from '../../api/idempotency.ts';
import { randomUUID } from 'node:crypto';
import * as grants from '../../db/queries/venue-grants.ts';
import {
  bookSlot,
  eventTypes,
  hold,
  holdSlot,
  localDate,
  makeBookingWorld,
  makeOverdue,
} from '../helpers/booking.ts';
import { useTestDatabase } from '../helpers/database.ts';
import { makePartner } from '../helpers/factories.ts';
import { call, useTestServer } from '../helpers/http.ts';
import { assertDocumented } from '../helpers/openapi.ts';

const database = useTestDatabase(test);
const server = useTestServer(test, database);

const post = (path: string, key: string, body: Record<string, unknown>) =>
  call(server(), 'POST', `/api/v1${path}`, { key, body });

test('release: ACTIVE → CANCELLED frees the slot; a retry replays 200; wrong states and owners answer 4xx', async (t) => {
  const { db } = database();
  const w = await makeBookingWorld(db);
  const h = await holdSlot(server(), w);
  const key = randomUUID();
  const stranger = await makePartner(db);
  const foreign = await post(`/partner/holds/${h.holdId}/cancel`, stranger.apiKey, {
    idempotency_key: randomUUID(),
  });
  t.is(foreign.status, 403);
  t.is(foreign.body.error, 'UNAUTHORIZED');

  const released = await post(`/partner/holds/${h.holdId}/cancel`, w.apiKey, {
    idempotency_key: key,
    reason: 'customer left',
  });
  t.is(released.status, 200);
  assertDocumented(t, 'POST /partner/holds/{holdId}/cancel', released);
  t.deepEqual(released.body, { message: 'Hold released.', hold_id: h.holdId, status: 'CANCELLED' });
  const replay = await post(`/partner/holds/${h.holdId}/cancel`, w.apiKey, { idempotency_key: key });
  t.is(replay.status, 200);
  t.deepEqual(replay.body, released.body);
  const again = await post(`/partner/holds/${h.holdId}/cancel`, w.apiKey, {
    idempotency_key: randomUUID(),
  });
  t.is(again.status, 409);
  t.is(again.body.error, 'INVALID_HOLD_STATE');
  t.deepEqual(await eventTypes(db, h.holdId), ['hold_created', 'hold_cancelled']);
  t.is(
    (
      await hold(server(), w.apiKey, {
        venue_id: w.venueId,
        resource_id: w.court,
        slot_start: h.slotStart,
      })
    ).status,
    201,
    'the slot is free again',
  );

  const missing = await post(`/partner/holds/${randomUUID()}/cancel`, w.apiKey, {
    idempotency_key: randomUUID(),
  });
  t.is(missing.status, 404);
  t.is(missing.body.error, 'HOLD_NOT_FOUND');
  const late = await holdSlot(server(), w, { index: 1 });
  await makeOverdue(db, late.holdId);
  t.is(
    (await post(`/partner/holds/${late.holdId}/cancel`, w.apiKey, { idempotency_key: randomUUID() })).body
      .error,
    'HOLD_EXPIRED',
  );
});

test('cancel: BOOKED → CANCELLED frees the slot; replay 200; cancel again 409 INVALID_HOLD_STATE; refund then works', async (t) => {
  const { db } = database();
  const w = await makeBookingWorld(db);
  const b = await bookSlot(server(), w);
  const key = randomUUID();
  const cancelled = await post(`/bookings/${b.bookingId}/cancel`, w.apiKey, {
    idempotency_key: key,
    reason: 'rain',
  });
  t.is(cancelled.status, 200);
  assertDocumented(t, 'POST /bookings/{bookingId}/cancel', cancelled);
  t.is(cancelled.body.status, 'CANCELLED');
  const replay = await post(`/bookings/${b.bookingId}/cancel`, w.apiKey, { idempotency_key: key });
  t.is(replay.status, 200);
  t.deepEqual(replay.body, cancelled.body);
  const twice = await post(`/bookings/${b.bookingId}/cancel`, w.apiKey, { idempotency_key: randomUUID() });
  t.is(twice.status, 409);
  t.is(twice.body.error, 'INVALID_HOLD_STATE');
  const mismatch = await post(`/bookings/${b.bookingId}/refund`, w.apiKey, { idempotency_key: key });
  t.is(mismatch.status, 409);
  t.is(mismatch.body.error, 'IDEMPOTENCY_KEY_MISMATCH', 'the cancel key cannot refund');
  t.is(
    (await hold(server(), w.apiKey, { venue_id: w.venueId, resource_id: w.court, slot_start: b.slotStart }))
      .status,
    201,
    'slot freed',
  );

  const refunded = await post(`/bookings/${b.bookingId}/refund`, w.apiKey, { idempotency_key: randomUUID() });
  t.is(refunded.status, 200);
  t.is(refunded.body.status, 'REFUNDED');
  const detail = await call(server(), 'GET', `/api/v1/bookings/${b.bookingId}`, { key: w.apiKey });
  t.is(detail.body.status, 'REFUNDED');
  t.truthy(detail.body.cancelled_at);
  t.truthy(detail.body.refunded_at);
  assertDocumented(t, 'GET /bookings/{bookingId}', detail);
  t.deepEqual(await eventTypes(db, b.holdId), [
    'hold_created',
    'booking_created',
    'booking_cancelled',
    'booking_refunded',
  ]);
});

test('refund: BOOKED → REFUNDED frees the slot; refund again without the key is 409; with the key replays', async (t) => {
  const { db } = database();
  const w = await makeBookingWorld(db);
  const b = await bookSlot(server(), w, { index: 1 });
  const key = randomUUID();
  const refunded = await post(`/bookings/${b.bookingId}/refund`, w.apiKey, { idempotency_key: key });
  t.is(refunded.status, 200);
  t.deepEqual(
    (await post(`/bookings/${b.bookingId}/refund`, w.apiKey, { idempotency_key: key })).body,
    refunded.body,
  );
  const again = await post(`/bookings/${b.bookingId}/refund`, w.apiKey, { idempotency_key: randomUUID() });
  t.is(again.status, 409);
  t.is(again.body.error, 'INVALID_HOLD_STATE');
  const cancelAfter = await post(`/bookings/${b.bookingId}/cancel`, w.apiKey, {
    idempotency_key: randomUUID(),
  });
  t.is(cancelAfter.body.error, 'INVALID_HOLD_STATE');
  t.is(
    (await hold(server(), w.apiKey, { venue_id: w.venueId, resource_id: w.court, slot_start: b.slotStart }))
      .status,
    201,
  );
  const otherBooking = await bookSlot(server(), w, { index: 2 });
  const reusedKey = await post(`/bookings/${otherBooking.bookingId}/refund`, w.apiKey, {
    idempotency_key: key,
  });
  t.is(reusedKey.body.error, 'IDEMPOTENCY_KEY_MISMATCH', 'the key belongs to another booking');
});

test("cancel and refund: 404 for unknown, 403 UNAUTHORIZED for another partner's, 403 VENUE_NOT_AUTHORIZED after revoke", async (t) => {
  const { db } = database();
  const w = await makeBookingWorld(db);
  const b = await bookSlot(server(), w, { index: 3 });
  const stranger = await makePartner(db);
  for (const op of ['cancel', 'refund']) {
    const missing = await post(`/bookings/${randomUUID()}/${op}`, w.apiKey, {
      idempotency_key: randomUUID(),
    });
    t.is(missing.status, 404);
    t.is(missing.body.error, 'BOOKING_NOT_FOUND');
    const foreign = await post(`/bookings/${b.bookingId}/${op}`, stranger.apiKey, {
      idempotency_key: randomUUID(),
    });
    t.is(foreign.status, 403);
    t.is(foreign.body.error, 'UNAUTHORIZED');
  }
  t.is(
    (await call(server(), 'GET', `/api/v1/bookings/${b.bookingId}`, { key: stranger.apiKey })).status,
    403,
  );
  t.is(
    (await call(server(), 'GET', `/api/v1/bookings/${randomUUID()}`, { key: w.apiKey })).body.error,
    'BOOKING_NOT_FOUND',
  );
  await grants.revoke(db, w.partnerId, w.venueId);
  const revoked = await post(`/bookings/${b.bookingId}/cancel`, w.apiKey, { idempotency_key: randomUUID() });
  t.is(revoked.status, 403);
  t.is(revoked.body.error, 'VENUE_NOT_AUTHORIZED');
  t.is(
    (await call(server(), 'GET', `/api/v1/bookings/${b.bookingId}`, { key: w.apiKey })).status,
    200,
    'reads stay allowed',
  );
});

test('GET /bookings: only your own, newest first, with every filter and limit', async (t) => {
  const { db } = database();
  const w = await makeBookingWorld(db);
  const other = await makeBookingWorld(db);
  const first = await bookSlot(server(), w, {
    index: 0,
    confirm: { customer_name: 'Ravi Kumar', customer_phone: '9000000001' },
  });
  const second = await bookSlot(server(), w, {
    index: 1,
    confirm: { customer_name: 'Meera Nair', customer_phone: '+919000000002' },
  });
  await bookSlot(server(), other, { index: 0 });
  const list = async (query = '') => call(server(), 'GET', `/api/v1/bookings${query}`, { key: w.apiKey });

  const all = await list();
  t.is(all.status, 200);
  assertDocumented(t, 'GET /bookings', all);
  t.deepEqual(
    all.body.bookings.map((b: { booking_id: string }) => b.booking_id),
    [second.bookingId, first.bookingId],
  );
  t.deepEqual((await list('?limit=1')).body.bookings.length, 1);
  t.deepEqual(
    (await list('?customer_name=ravi')).body.bookings.map((b: { booking_id: string }) => b.booking_id),
    [first.bookingId],
  );
  t.deepEqual((await list('?customer_name=%25')).body.bookings, [], '% is a literal character');
  t.deepEqual(
    (await list('?customer_phone=9000000002')).body.bookings.map((b: { booking_id: string }) => b.booking_id),
    [second.bookingId],
  );
  t.is(
    (await list(`?venue_id=${other.venueId}`)).body.bookings.length,
    0,
    'venue_id filters within own bookings',
  );
  const tomorrow = await localDate(db, w.venueId, 1);
  const today = await localDate(db, w.venueId, 0);
  t.is((await list(`?from=${tomorrow}&to=${tomorrow}`)).body.bookings.length, 2);
  t.is((await list(`?to=${today}`)).body.bookings.length, 0);
  for (const bad of [
    '?limit=0',
    '?limit=101',
    '?limit=x',
    '?from=2026-02-30',
    '?venue_id=1',
    `?from=${tomorrow}&to=${today}`,
  ]) {
    const res = await list(bad);
    t.is(res.status, 400, bad);
    t.is(res.body.error, 'VALIDATION_ERROR');
  }
});

test('GET /bookings pages with starting_after: keyset over ties, the same filters, has_more exact', async (t) => {
  const { db } = database();
  const w = await makeBookingWorld(db);
  const other = await makeBookingWorld(db);
  const booked: string[] = [];
  for (let index = 0; index < 7; index++) {
    const phone = index % 2 ? '9000000001' : '9000000002';
    booked.push((await bookSlot(server(), w, { index, confirm: { customer_phone: phone } })).bookingId);
  }
  // Three share one booked_at to the microsecond: the id orders them, and no page repeats or skips one.
  await db('bookings')
    .whereIn('id', booked.slice(2, 5))
    .update({ booked_at: db.raw("'2031-01-01 10:00:00.123456+00'") });
  const foreign = (await bookSlot(server(), other, { index: 0 })).bookingId;
  const list = (query: string) => call(server(), 'GET', `/api/v1/bookings${query}`, { key: w.apiKey });
  const ids = (res: { body: { bookings: { booking_id: string }[] } }) =>
    res.body.bookings.map((b) => b.booking_id);

  const whole = await list('?limit=100');
  t.is(whole.body.has_more, false);
  t.is(ids(whole).length, 7);
  const walk = async (filter: string, limit: number) => {
    const pages: { ids: string[]; hasMore: boolean }[] = [];
    let after = '';
    for (;;) {
      const res = await list(`?limit=${limit}${filter}${after && `&starting_after=${after}`}`);
      t.is(res.status, 200);
      assertDocumented(t, 'GET /bookings', res);
      pages.push({ ids: ids(res), hasMore: res.body.has_more });
      if (!res.body.has_more) return pages;
      after = ids(res).at(-1)!;
    }
  };
  const byThree = await walk('', 3);
  t.deepEqual(
    byThree.map((p) => [p.ids.length, p.hasMore]),
    [
      [3, true],
      [3, true],
      [1, false],
    ],
  );
  t.deepEqual(
    byThree.flatMap((p) => p.ids),
    ids(whole),
  );
  const exact = await walk('', 7);
  t.deepEqual(
    exact.map((p) => [p.ids.length, p.hasMore]),
    [[7, false]],
    'a full page that ends at the last match says no more',
  );
  const filtered = await walk('&customer_phone=9000000001', 2);
  t.deepEqual(
    filtered.flatMap((p) => p.ids),
    ids(await list('?limit=100&customer_phone=9000000001')),
  );
  t.deepEqual(
    filtered.map((p) => p.hasMore),
    [true, false],
    'three matches by two: has_more counts only matches',
  );

  for (const bad of [`?starting_after=${foreign}`, `?starting_after=${randomUUID()}`, '?starting_after=x']) {
    const res = await list(bad);
    t.is(res.status, 400, bad);
    t.is(res.body.error, 'VALIDATION_ERROR');
    assertDocumented(t, 'GET /bookings', res);
  }
});

test('a key stores the write as data, replayed through its presenter; an earlier release’s stored answer replays as it is', async (t) => {
  const { db } = database();
  const w = await makeBookingWorld(db);
  const b = await bookSlot(server(), w, { index: 5 });
  const key = randomUUID();
  const cancel = () =>
    call(server(), 'POST', `/api/v1/bookings/${b.bookingId}/cancel`, {
      key: w.apiKey,
      body: { idempotency_key: key, reason: 'rain' },
    });
  const first = await cancel();
  t.is(first.status, 200, first.text);
  const stored = await db('idempotency_keys').where({ partner_id: w.partnerId, key }).first();
  t.like(
    stored.result,
    { id: b.bookingId, status: 'CANCELLED', cancel_reason: 'rain' },
    'the booking, as data',
  );
  t.is(stored.response, null);
  t.deepEqual((await cancel()).body, first.body, 'the replay is presented as the first answer was');

  // A key written by a release that stored the presented answer: it is replayed as it was sent.
  const legacy = randomUUID();
  const answer = { message: 'Booking cancelled.', booking_id: b.bookingId, status: 'CANCELLED' };
  await db('idempotency_keys').insert({
    partner_id: w.partnerId,
    key: legacy,
    operation: 'booking_cancel',
    fingerprint: fingerprint({ bookingId: b.bookingId }),
    response: JSON.stringify(answer),
  });
  const replayed = await call(server(), 'POST', `/api/v1/bookings/${b.bookingId}/cancel`, {
    key: w.apiKey,
    body: { idempotency_key: legacy },
  });
  t.deepEqual([replayed.status, replayed.body], [200, answer]);
});
