import test from 'ava';
import { randomUUID } from 'node:crypto';
import { insertMembership } from '../../db/queries/booking-rules.ts';
import * as grants from '../../db/queries/venue-grants.ts';
import {
  confirm,
  eventTypes,
  holdSlot,
  makeBookingWorld,
  makeOverdue,
  releaseHold,
} from '../helpers/booking.ts';
import { useTestDatabase } from '../helpers/database.ts';
import { makePartner } from '../helpers/factories.ts';
import { call, useTestServer } from '../helpers/http.ts';
import { assertDocumented } from '../helpers/openapi.ts';

const database = useTestDatabase(test);
const server = useTestServer(test, database);

test('confirm: 201 ConfirmBookingResponse, the hold is CONFIRMED, booking_created recorded', async (t) => {
  const { db } = database();
  const w = await makeBookingWorld(db);
  const h = await holdSlot(server(), w);
  const res = await confirm(server(), w.apiKey, { hold_id: h.holdId, customer_email: 'asha@example.com' });
  t.is(res.status, 201, res.text);
  assertDocumented(t, 'POST /bookings/confirm', res);
  t.deepEqual(Object.keys(res.body).sort(), ['booked_at', 'booking_id', 'price_rupees', 'slot_id', 'status']);
  t.is(res.body.status, 'BOOKED');
  t.is(res.body.price_rupees, 500);
  t.is((await db('holds').where({ id: h.holdId }).first()).status, 'CONFIRMED');
  t.deepEqual(await eventTypes(db, h.holdId), ['hold_created', 'booking_created']);
  const detail = await call(server(), 'GET', `/api/v1/bookings/${res.body.booking_id}`, { key: w.apiKey });
  t.like(detail.body, {
    booking_id: res.body.booking_id,
    hold_id: h.holdId,
    status: 'BOOKED',
    customer_name: 'Asha Rao',
    customer_phone: '+919812345678',
    customer_email: 'asha@example.com',
    payment_reference: 'pay-123',
    payment_method: null,
    package_purchase_id: null,
    cancelled_at: null,
    refunded_at: null,
  });
});

test('package_credit_consumed is present only when use_package_credit was sent', async (t) => {
  const w = await makeBookingWorld(database().db);
  const h1 = await holdSlot(server(), w, { index: 0 });
  const withField = await confirm(server(), w.apiKey, { hold_id: h1.holdId, use_package_credit: true });
  t.is(withField.status, 201);
  t.is(withField.body.package_credit_consumed, false, 'no package purchase: a paid confirm');
  const h2 = await holdSlot(server(), w, { index: 1 });
  const withFalse = await confirm(server(), w.apiKey, { hold_id: h2.holdId, use_package_credit: false });
  t.is(withFalse.body.package_credit_consumed, false);
  const h3 = await holdSlot(server(), w, { index: 2 });
  t.false('package_credit_consumed' in (await confirm(server(), w.apiKey, { hold_id: h3.holdId })).body);
});

test('idempotency: same key and request → the original booking; same key, other request → 409', async (t) => {
  const w = await makeBookingWorld(database().db);
  const { holdId } = await holdSlot(server(), w);
  const key = randomUUID();
  const first = await confirm(server(), w.apiKey, { hold_id: holdId, idempotency_key: key });
  const again = await confirm(server(), w.apiKey, { hold_id: holdId, idempotency_key: key });
  t.is(again.status, 201);
  t.deepEqual(again.body, first.body);
  const different = await confirm(server(), w.apiKey, {
    hold_id: holdId,
    idempotency_key: key,
    customer_name: 'Someone Else',
  });
  t.is(different.status, 409);
  t.is(different.body.error, 'IDEMPOTENCY_KEY_MISMATCH');
  assertDocumented(t, 'POST /bookings/confirm', different);

  const h2 = await holdSlot(server(), w, { index: 1 });
  const holdKey = randomUUID();
  await holdSlot(server(), w, { index: 5, body: { idempotency_key: holdKey } });
  const reused = await confirm(server(), w.apiKey, { hold_id: h2.holdId, idempotency_key: holdKey });
  t.is(reused.status, 409, 'a hold key cannot confirm');
  t.is(reused.body.error, 'IDEMPOTENCY_KEY_MISMATCH');
});

test("unknown hold 404; another partner's hold 403 UNAUTHORIZED before venue authorisation", async (t) => {
  const { db } = database();
  const w = await makeBookingWorld(db);
  const { holdId } = await holdSlot(server(), w);
  const missing = await confirm(server(), w.apiKey, { hold_id: randomUUID() });
  t.is(missing.status, 404);
  t.is(missing.body.error, 'HOLD_NOT_FOUND');
  const stranger = await makePartner(db);
  const foreign = await confirm(server(), stranger.apiKey, { hold_id: holdId });
  t.is(foreign.status, 403);
  t.is(foreign.body.error, 'UNAUTHORIZED', 'ownership is checked before the (missing) venue grant');
  assertDocumented(t, 'POST /bookings/confirm', foreign);
  await grants.revoke(db, w.partnerId, w.venueId);
  const revoked = await confirm(server(), w.apiKey, { hold_id: holdId });
  t.is(revoked.status, 403);
  t.is(revoked.body.error, 'VENUE_NOT_AUTHORIZED');
});

test('a replayed confirm reports the booking it made even after the venue is revoked; a new key is refused', async (t) => {
  const { db } = database();
  const w = await makeBookingWorld(db);
  const { holdId } = await holdSlot(server(), w);
  const key = randomUUID();
  const first = await confirm(server(), w.apiKey, { hold_id: holdId, idempotency_key: key });
  t.is(first.status, 201);
  await grants.revoke(db, w.partnerId, w.venueId);
  const replay = await confirm(server(), w.apiKey, { hold_id: holdId, idempotency_key: key });
  t.is(replay.status, 201, 'the retry learns that the booking exists');
  t.deepEqual(replay.body, first.body);
  const fresh = await confirm(server(), w.apiKey, { hold_id: holdId });
  t.is(fresh.status, 403);
  t.is(fresh.body.error, 'VENUE_NOT_AUTHORIZED');
});

test('HOLD_EXPIRED past expiry (job run or not); INVALID_HOLD_STATE when confirmed or released', async (t) => {
  const { db } = database();
  const w = await makeBookingWorld(db);
  const { holdId } = await holdSlot(server(), w, { index: 0 });
  await makeOverdue(db, holdId);
  const overdue = await confirm(server(), w.apiKey, { hold_id: holdId });
  t.is(overdue.status, 409);
  t.is(overdue.body.error, 'HOLD_EXPIRED');
  await db('holds').where({ id: holdId }).update({ status: 'EXPIRED' });
  t.is((await confirm(server(), w.apiKey, { hold_id: holdId })).body.error, 'HOLD_EXPIRED');

  const h2 = await holdSlot(server(), w, { index: 1 });
  t.is((await confirm(server(), w.apiKey, { hold_id: h2.holdId })).status, 201);
  const twice = await confirm(server(), w.apiKey, { hold_id: h2.holdId });
  t.is(twice.status, 409);
  t.is(twice.body.error, 'INVALID_HOLD_STATE');

  const h3 = await holdSlot(server(), w, { index: 2 });
  await releaseHold(server(), w, h3.holdId);
  t.is((await confirm(server(), w.apiKey, { hold_id: h3.holdId })).body.error, 'INVALID_HOLD_STATE');
});

test('DOUBLE_BOOKING_ATTEMPT when the hold no longer holds its window', async (t) => {
  const { db } = database();
  const w = await makeBookingWorld(db);
  const { holdId } = await holdSlot(server(), w);
  await db('reservations').where({ hold_id: holdId }).update({ active: false });
  const res = await confirm(server(), w.apiKey, { hold_id: holdId });
  t.is(res.status, 409);
  t.is(res.body.error, 'DOUBLE_BOOKING_ATTEMPT');
});

test('validation: customer fields, payment reference and key are checked', async (t) => {
  const w = await makeBookingWorld(database().db);
  const { holdId } = await holdSlot(server(), w);
  for (const [body, field] of [
    [{ customer_name: 'A' }, 'customer_name'],
    [{ customer_name: 'x'.repeat(101) }, 'customer_name'],
    [{ customer_phone: '5812345678' }, 'customer_phone'],
    [{ customer_phone: '+9198123456789' }, 'customer_phone'],
    [{ customer_email: 'not-an-email' }, 'customer_email'],
    [{ payment_reference: '' }, 'payment_reference'],
    [{ idempotency_key: undefined }, 'idempotency_key'],
    [{ hold_id: 'abc' }, 'hold_id'],
    [{ use_package_credit: 'yes' }, 'use_package_credit'],
  ] as const) {
    const res = await confirm(server(), w.apiKey, { hold_id: holdId, ...body });
    t.is(res.status, 400, field);
    t.true(
      res.body.details.some((d: { field: string }) => d.field === field),
      `${field}: ${res.text}`,
    );
  }
});

test("a member's price is confirmed only for that member; other holds for any customer", async (t) => {
  const { db } = database();
  const w = await makeBookingWorld(db);
  await insertMembership(db, {
    venueId: w.venueId,
    customerPhone: '+919812345678',
    discountPercent: 20,
    expiresAt: null,
  });
  const holdFor = async (index: number, phone?: string) => {
    const { response } = await holdSlot(server(), w, { index, body: phone ? { customer_phone: phone } : {} });
    return response.body as { hold_id: string; price_rupees: number };
  };

  const member = await holdFor(0, '9812345678');
  t.is(member.price_rupees, 400, 'the member pays 20% less');
  const key = randomUUID();
  const other = await confirm(server(), w.apiKey, {
    hold_id: member.hold_id,
    customer_phone: '9899999999',
    idempotency_key: key,
  });
  t.is(other.status, 400, other.text);
  assertDocumented(t, 'POST /bookings/confirm', other);
  t.is(other.body.error, 'VALIDATION_ERROR');
  t.deepEqual(
    other.body.details.map((d: { field: string; in: string }) => [d.field, d.in]),
    [['customer_phone', 'body']],
  );
  t.is((await db('holds').where({ id: member.hold_id }).first()).status, 'ACTIVE', 'nothing changed');
  t.falsy(await db('idempotency_keys').where({ key }).first(), 'the key is not spent');

  // The same member, written another way, confirms at the member's price.
  const same = await confirm(server(), w.apiKey, {
    hold_id: member.hold_id,
    customer_phone: '+919812345678',
  });
  t.is(same.status, 201, same.text);
  t.is(same.body.price_rupees, 400);

  // Without a discount in the price, the hold's phone (or none) does not bind the confirm.
  for (const [index, phone] of [
    [1, undefined],
    [2, '9700000000'],
  ] as const) {
    const plain = await holdFor(index, phone);
    t.is(plain.price_rupees, 500);
    const res = await confirm(server(), w.apiKey, { hold_id: plain.hold_id, customer_phone: '9899999999' });
    t.is(res.status, 201, res.text);
  }
});
