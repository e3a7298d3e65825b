/**
 * Packages: purchase (idempotent, authorised), the reads, and credits at confirm: taken from the
 * purchase that expires first, never from another customer's or partner's, never twice for a
 * replay, and given back by a cancel or refund while the purchase is valid.
 */
import test from 'ava';
import { randomUUID } from 'node:crypto';
import * as grants from '../../db/queries/venue-grants.ts';
import { bookSlot, confirm, holdSlot, makeBookingWorld, type BookingWorld } from '../helpers/booking.ts';
import { useTestDatabase } from '../helpers/database.ts';
import { makePackage, makePartner, makeVenue } from '../helpers/factories.ts';
import { call, useTestServer } from '../helpers/http.ts';
import { assertDocumented } from '../helpers/openapi.ts';
import { purchase } from '../helpers/packages.ts';

const database = useTestDatabase(test);
const server = useTestServer(test, database);

/** A booking world with a package of `credits` at its venue. */
async function world(credits = 3): Promise<BookingWorld & { packageId: string }> {
  const { db } = database();
  const w = await makeBookingWorld(db);
  return { ...w, packageId: await makePackage(db, { venueId: w.venueId, credits, validDays: 30 }) };
}

const get = (key: string, path: string) => call(server(), 'GET', `/api/v1${path}`, { key });
const credits = async (purchaseId: string) =>
  (await database().db('package_purchases').where({ id: purchaseId }).first()).credits_remaining as number;

test('purchase: 201 {purchase} with all the credits, valid for the package’s days, readable by id', async (t) => {
  const w = await world(5);
  const res = await purchase(server(), w.apiKey, w.packageId, { customer_phone: '+919812345678' });
  t.is(res.status, 201, res.text);
  assertDocumented(t, 'POST /packages/{packageId}/purchase', res);
  const p = res.body.purchase;
  t.like(p, {
    package_id: w.packageId,
    customer_phone: '+919812345678',
    partner_id: w.partnerId,
    credits_remaining: 5,
    credits_total: 5,
    payment_method: 'upi',
    venue_id: w.venueId,
  });
  const days = (Date.parse(p.expires_at) - Date.parse(p.purchased_at)) / 86_400_000;
  t.is(days, 30);
  const read = await get(w.apiKey, `/packages/purchases/${p.id}`);
  t.is(read.status, 200);
  assertDocumented(t, 'GET /packages/purchases/{purchaseId}', read);
  t.deepEqual(read.body, res.body);
});

test('purchase idempotency: a retry returns the original and adds no credits; another request is 409', async (t) => {
  const { db } = database();
  const w = await world(4);
  const key = randomUUID();
  const first = await purchase(server(), w.apiKey, w.packageId, { idempotency_key: key });
  const again = await purchase(server(), w.apiKey, w.packageId, { idempotency_key: key });
  t.is(again.status, 201);
  t.is(again.text, first.text, 'the original purchase, byte for byte');
  t.is(Number((await db('package_purchases').where({ package_id: w.packageId }).count({ n: '*' }))[0]!.n), 1);

  const otherPackage = await makePackage(db, { venueId: w.venueId });
  for (const body of [
    { idempotency_key: key, customer_phone: '9876543210' },
    { idempotency_key: key, payment_method: 'cash' },
  ]) {
    const res = await purchase(server(), w.apiKey, w.packageId, body);
    t.is(res.status, 409);
    t.is(res.body.error, 'IDEMPOTENCY_KEY_MISMATCH');
  }
  const res = await purchase(server(), w.apiKey, otherPackage, { idempotency_key: key });
  t.is(res.status, 409);
  assertDocumented(t, 'POST /packages/{packageId}/purchase', res);
  t.is(res.body.error, 'IDEMPOTENCY_KEY_MISMATCH');
  t.is(Number((await db('package_purchases').where({ partner_id: w.partnerId }).count({ n: '*' }))[0]!.n), 1);
});

test('purchase: unknown package 404 PACKAGE_NOT_FOUND; venue not granted or archived 403; bad input 400', async (t) => {
  const { db } = database();
  const w = await world();
  const missing = await purchase(server(), w.apiKey, randomUUID());
  t.is(missing.status, 404);
  t.is(missing.body.error, 'PACKAGE_NOT_FOUND');
  assertDocumented(t, 'POST /packages/{packageId}/purchase', missing);

  const foreignPackage = await makePackage(db, { venueId: await makeVenue(db) });
  const archived = await makeVenue(db, { status: 'archived', grantTo: [w.partnerId] });
  for (const packageId of [foreignPackage, await makePackage(db, { venueId: archived })]) {
    const res = await purchase(server(), w.apiKey, packageId);
    t.is(res.status, 403);
    t.is(res.body.error, 'VENUE_NOT_AUTHORIZED');
  }

  const bad = [
    { path: 'not-a-uuid', body: {}, field: 'packageId' },
    { path: w.packageId, body: { customer_phone: '12345' }, field: 'customer_phone' },
    { path: w.packageId, body: { payment_method: 'bitcoin' }, field: 'payment_method' },
    { path: w.packageId, body: { idempotency_key: undefined }, field: 'idempotency_key' },
    { path: w.packageId, body: { idempotency_key: 'k'.repeat(256) }, field: 'idempotency_key' },
  ];
  for (const { path, body, field } of bad) {
    const res = await purchase(server(), w.apiKey, path, body);
    t.is(res.status, 400, field);
    t.is(res.body.error, 'VALIDATION_ERROR');
    t.true(
      res.body.details.some((d: { field: string }) => d.field === field),
      field,
    );
  }
  t.is(Number((await db('package_purchases').where({ partner_id: w.partnerId }).count({ n: '*' }))[0]!.n), 0);
});

test('reads: only the caller’s purchases; active ones with credits and time left, soonest expiry first', async (t) => {
  const { db } = database();
  const w = await world();
  const other = await makePartner(db);
  await grants.grant(db, other.partnerId, w.venueId);
  const longer = await makePackage(db, { venueId: w.venueId, validDays: 60 });
  const late = (await purchase(server(), w.apiKey, longer)).body.purchase;
  const soon = (await purchase(server(), w.apiKey, w.packageId)).body.purchase;
  const used = (await purchase(server(), w.apiKey, w.packageId)).body.purchase;
  const lapsed = (await purchase(server(), w.apiKey, w.packageId)).body.purchase;
  await db('package_purchases').where({ id: used.id }).update({ credits_remaining: 0 });
  await db('package_purchases')
    .where({ id: lapsed.id })
    .update({ expires_at: db.raw("now() - interval '1 second'") });
  const othersPurchase = (await purchase(server(), other.apiKey, w.packageId)).body.purchase;
  await purchase(server(), w.apiKey, w.packageId, { customer_phone: '9876543210' });

  const active = await get(w.apiKey, `/packages/active?customer_phone=9812345678&venue_id=${w.venueId}`);
  t.is(active.status, 200);
  assertDocumented(t, 'GET /packages/active', active);
  t.deepEqual(
    active.body.data.map((p: { id: string }) => p.id),
    [soon.id, late.id],
  );

  const foreign = await get(w.apiKey, `/packages/purchases/${othersPurchase.id}`);
  t.is(foreign.status, 404);
  t.is(foreign.body.error, 'PURCHASE_NOT_FOUND');
  assertDocumented(t, 'GET /packages/purchases/{purchaseId}', foreign);
  t.is((await get(w.apiKey, `/packages/purchases/${randomUUID()}`)).status, 404);
  t.is((await get(w.apiKey, '/packages/purchases/nope')).status, 400);
  t.is((await get(w.apiKey, `/packages/active?venue_id=${w.venueId}`)).status, 400);
  t.is((await get(w.apiKey, '/packages/active?customer_phone=9812345678&venue_id=x')).status, 400);

  // Reads stay allowed after the grant is withdrawn.
  await grants.revoke(db, w.partnerId, w.venueId);
  t.is((await get(w.apiKey, `/packages/purchases/${soon.id}`)).status, 200);
  const afterRevoke = await get(w.apiKey, `/packages/active?customer_phone=9812345678&venue_id=${w.venueId}`);
  t.is(afterRevoke.body.data.length, 2);
});

test('confirm with use_package_credit takes one credit from the purchase expiring first', async (t) => {
  const { db } = database();
  const w = await world(2);
  const longer = await makePackage(db, { venueId: w.venueId, validDays: 60, credits: 5 });
  const late = (await purchase(server(), w.apiKey, longer)).body.purchase;
  const soon = (await purchase(server(), w.apiKey, w.packageId)).body.purchase;

  const res = (await bookSlot(server(), w, { index: 0, confirm: { use_package_credit: true } })).confirm;
  t.is(res.status, 201, res.text);
  assertDocumented(t, 'POST /bookings/confirm', res);
  t.true(res.body.package_credit_consumed);
  t.is(await credits(soon.id), 1);
  t.is(await credits(late.id), 5);
  const detail = await get(w.apiKey, `/bookings/${res.body.booking_id}`);
  t.like(detail.body, { payment_method: 'package', package_purchase_id: soon.id });
  const list = await get(w.apiKey, `/bookings?venue_id=${w.venueId}`);
  t.like(list.body.bookings[0], { payment_method: 'package', package_purchase_id: soon.id });

  await bookSlot(server(), w, { index: 1, confirm: { use_package_credit: true } });
  const third = (await bookSlot(server(), w, { index: 2, confirm: { use_package_credit: true } })).confirm;
  t.true(third.body.package_credit_consumed);
  t.is(await credits(soon.id), 0);
  t.is(await credits(late.id), 4, 'the next purchase pays once the first is used up');
});

test('no credit is taken without use_package_credit, for another customer, or from another partner', async (t) => {
  const { db } = database();
  const w = await world(3);
  const mine = (await purchase(server(), w.apiKey, w.packageId)).body.purchase;
  const other = await makePartner(db, { rateLimit: 100_000 });
  await grants.grant(db, other.partnerId, w.venueId);
  const foreign = (await purchase(server(), other.apiKey, w.packageId, { customer_phone: '9876543210' })).body
    .purchase;

  const paid = (await bookSlot(server(), w, { index: 0 })).confirm;
  t.false('package_credit_consumed' in paid.body);
  const declined = (await bookSlot(server(), w, { index: 1, confirm: { use_package_credit: false } }))
    .confirm;
  t.false(declined.body.package_credit_consumed);
  const { confirm: otherCustomer } = await bookSlot(server(), w, {
    index: 2,
    confirm: { use_package_credit: true, customer_phone: '9876543210' },
  });
  t.is(otherCustomer.status, 201);
  t.false(otherCustomer.body.package_credit_consumed, "another partner's purchase never pays");
  const detail = await get(w.apiKey, `/bookings/${otherCustomer.body.booking_id}`);
  t.like(detail.body, { payment_method: null, package_purchase_id: null });
  t.is(await credits(mine.id), 3);
  t.is(await credits(foreign.id), 3);

  // An expired purchase never pays either.
  await db('package_purchases')
    .where({ id: mine.id })
    .update({ expires_at: db.raw("now() - interval '1 second'") });
  const expired = await bookSlot(server(), w, { index: 3, confirm: { use_package_credit: true } });
  t.false(expired.confirm.body.package_credit_consumed);
});

test('a replayed confirm returns the original answer and takes no second credit', async (t) => {
  const w = await world(3);
  const p = (await purchase(server(), w.apiKey, w.packageId)).body.purchase;
  const { holdId } = await holdSlot(server(), w);
  const body = { hold_id: holdId, use_package_credit: true, idempotency_key: randomUUID() };
  const first = await confirm(server(), w.apiKey, body);
  const again = await confirm(server(), w.apiKey, body);
  t.true(first.body.package_credit_consumed);
  t.is(again.status, 201);
  t.is(again.text, first.text);
  t.is(await credits(p.id), 2);
});

test('cancel or refund gives the credit back once while the purchase is valid; not after it expired', async (t) => {
  const { db } = database();
  const w = await world(3);
  const p = (await purchase(server(), w.apiKey, w.packageId)).body.purchase;
  const change = (bookingId: string, op: 'cancel' | 'refund') =>
    call(server(), 'POST', `/api/v1/bookings/${bookingId}/${op}`, {
      key: w.apiKey,
      body: { idempotency_key: randomUUID() },
    });

  const a = (await bookSlot(server(), w, { index: 0, confirm: { use_package_credit: true } })).bookingId;
  const b = (await bookSlot(server(), w, { index: 1, confirm: { use_package_credit: true } })).bookingId;
  const c = (await bookSlot(server(), w, { index: 2, confirm: { use_package_credit: true } })).bookingId;
  t.is(await credits(p.id), 0);

  t.is((await change(a, 'cancel')).status, 200);
  t.is(await credits(p.id), 1, 'cancel gives it back');
  t.is((await change(a, 'refund')).status, 200);
  t.is(await credits(p.id), 1, 'a refund after the cancel does not give it back again');
  t.is((await change(b, 'refund')).status, 200);
  t.is(await credits(p.id), 2, 'a refund of a BOOKED booking gives it back');

  await db('package_purchases')
    .where({ id: p.id })
    .update({ expires_at: db.raw("now() - interval '1 second'") });
  t.is((await change(c, 'cancel')).status, 200);
  t.is(await credits(p.id), 2, 'an expired purchase gets nothing back');
});
