/**
 * Waitlist through the API: join (and re-join: same entry, reset and refreshed), validation and
 * venue authorisation, the caller-only list with its filters, and cancel.
 */
import test from 'ava';
import { randomUUID } from 'node:crypto';
import * as grants from '../../db/queries/venue-grants.ts';
import { localDate, makeBookingWorld } from '../helpers/booking.ts';
import { useTestDatabase } from '../helpers/database.ts';
import { makePartner, makeResource, makeVenue } from '../helpers/factories.ts';
import { call, useTestServer } from '../helpers/http.ts';
import { assertDocumented } from '../helpers/openapi.ts';
import { join } from '../helpers/waitlist.ts';

const database = useTestDatabase(test);
const server = useTestServer(test, database);

const list = (key: string, query: string) => call(server(), 'GET', `/api/v1/waitlist?${query}`, { key });
const remove = (key: string, id: string) => call(server(), 'DELETE', `/api/v1/waitlist/${id}`, { key });

async function world() {
  const { db } = database();
  const w = await makeBookingWorld(db);
  const date = await localDate(db, w.venueId, 2);
  const target = { venue_id: w.venueId, resource_id: w.court, slot_date: date };
  return { ...w, date, target, query: `venue_id=${w.venueId}&resource_id=${w.court}&slot_date=${date}` };
}

test('join: 201 {entry} waiting, expiring after expires_in_days (default 7)', async (t) => {
  const w = await world();
  const res = await join(server(), w.apiKey, {
    ...w.target,
    customer_name: 'Asha Rao',
    partner_id: 'ignored',
  });
  t.is(res.status, 201, res.text);
  assertDocumented(t, 'POST /waitlist', res);
  const entry = res.body.entry;
  t.like(entry, {
    venue_id: w.venueId,
    resource_id: w.court,
    slot_date: w.date,
    slot_id: null,
    customer_phone: '+919812345678',
    customer_name: 'Asha Rao',
    partner_id: w.partnerId,
    status: 'waiting',
    promoted_at: null,
  });
  t.is((Date.parse(entry.expires_at) - Date.parse(entry.created_at)) / 86_400_000, 7);
  const short = await join(server(), w.apiKey, {
    ...w.target,
    customer_phone: '9876543210',
    customer_name: null,
    expires_in_days: 1,
  });
  t.is(short.body.entry.customer_name, null);
  t.is((Date.parse(short.body.entry.expires_at) - Date.parse(short.body.entry.created_at)) / 86_400_000, 1);
});

test('a repeated join returns the same entry, back to waiting with a refreshed expires_at', async (t) => {
  const { db } = database();
  const w = await world();
  const first = (await join(server(), w.apiKey, { ...w.target, customer_name: 'Asha Rao' })).body.entry;
  await db('waitlist_entries')
    .where({ id: first.id })
    .update({
      status: 'promoted',
      promoted_at: db.fn.now(),
      slot_id: randomUUID(),
      expires_at: db.raw("now() + interval '1 hour'"),
    });
  const again = await join(server(), w.apiKey, {
    ...w.target,
    customer_phone: '+919812345678',
    expires_in_days: 3,
  });
  t.is(again.status, 201);
  const entry = again.body.entry;
  t.is(entry.id, first.id);
  t.like(entry, { status: 'waiting', slot_id: null, promoted_at: null, customer_name: 'Asha Rao' });
  t.is(entry.created_at, first.created_at, 'its place in the queue is kept');
  t.true(Date.parse(entry.updated_at) >= Date.parse(first.updated_at));
  t.true(Math.abs(Date.parse(entry.expires_at) - (Date.parse(entry.updated_at) + 3 * 86_400_000)) < 1000);
  t.is(Number((await db('waitlist_entries').where({ partner_id: w.partnerId }).count({ n: '*' }))[0]!.n), 1);
});

test('join: 400 VALIDATION_ERROR for a resource not of the venue, a past date and bad fields; 403 for a venue not granted', async (t) => {
  const { db } = database();
  const w = await world();
  const elsewhere = await makeResource(db);
  const yesterday = await localDate(db, w.venueId, -1);
  const bad: [Record<string, unknown>, string][] = [
    [{ resource_id: elsewhere }, 'resource_id'],
    [{ resource_id: 'court-1' }, 'resource_id'],
    [{ slot_date: yesterday }, 'slot_date'],
    [{ slot_date: '2026-02-30' }, 'slot_date'],
    [{ venue_id: 'nope' }, 'venue_id'],
    [{ customer_phone: '555' }, 'customer_phone'],
    [{ expires_in_days: 0 }, 'expires_in_days'],
    [{ expires_in_days: 31 }, 'expires_in_days'],
    [{ expires_in_days: 2.5 }, 'expires_in_days'],
    [{ customer_name: '' }, 'customer_name'],
  ];
  for (const [change, field] of bad) {
    const res = await join(server(), w.apiKey, { ...w.target, ...change });
    t.is(res.status, 400, field);
    assertDocumented(t, 'POST /waitlist', res);
    t.is(res.body.error, 'VALIDATION_ERROR');
    t.true(
      res.body.details.some((d: { field: string }) => d.field === field),
      field,
    );
  }
  const missing = await call(server(), 'POST', '/api/v1/waitlist', { key: w.apiKey, body: {} });
  t.deepEqual(missing.body.details.map((d: { field: string }) => d.field).sort(), [
    'customer_phone',
    'resource_id',
    'slot_date',
    'venue_id',
  ]);

  const notGranted = await makeVenue(db);
  const archived = await makeVenue(db, { status: 'archived', grantTo: [w.partnerId] });
  for (const venueId of [notGranted, archived, randomUUID()]) {
    const res = await join(server(), w.apiKey, { ...w.target, venue_id: venueId });
    t.is(res.status, 403);
    t.is(res.body.error, 'VENUE_NOT_AUTHORIZED');
  }
  t.is(Number((await db('waitlist_entries').where({ partner_id: w.partnerId }).count({ n: '*' }))[0]!.n), 0);
});

test('list: only the caller’s entries for the venue, resource and date, oldest first, by status', async (t) => {
  const { db } = database();
  const w = await world();
  const other = await makePartner(db);
  await grants.grant(db, other.partnerId, w.venueId);
  const a = (await join(server(), w.apiKey, { ...w.target, customer_phone: '9000000001' })).body.entry;
  const b = (await join(server(), w.apiKey, { ...w.target, customer_phone: '9000000002' })).body.entry;
  const c = (await join(server(), w.apiKey, { ...w.target, customer_phone: '9000000003' })).body.entry;
  await join(server(), other.apiKey, w.target);
  await join(server(), w.apiKey, { ...w.target, resource_id: w.halfA });
  await join(server(), w.apiKey, { ...w.target, slot_date: await localDate(db, w.venueId, 3) });
  await db('waitlist_entries')
    .where({ id: c.id })
    .update({ expires_at: db.raw("now() - interval '1 second'") });

  const all = await list(w.apiKey, w.query);
  t.is(all.status, 200);
  assertDocumented(t, 'GET /waitlist', all);
  t.deepEqual(
    all.body.data.map((e: { id: string }) => e.id),
    [a.id, b.id, c.id],
  );
  t.is(
    all.body.data[2].status,
    'expired',
    'a waiting entry past expires_at shows as expired before its job runs',
  );
  const waiting = await list(w.apiKey, `${w.query}&status=waiting`);
  t.deepEqual(
    waiting.body.data.map((e: { id: string }) => e.id),
    [a.id, b.id],
  );
  const expired = await list(w.apiKey, `${w.query}&status=expired`);
  t.deepEqual(
    expired.body.data.map((e: { id: string }) => e.id),
    [c.id],
  );
  t.deepEqual((await list(w.apiKey, `venue_id=${w.venueId}&resource_id=court-1&slot_date=${w.date}`)).body, {
    data: [],
  });
  for (const query of [
    `venue_id=${w.venueId}&resource_id=${w.court}`,
    `${w.query}&status=gone`,
    'resource_id=x',
  ]) {
    const res = await list(w.apiKey, query);
    t.is(res.status, 400, query);
    t.is(res.body.error, 'VALIDATION_ERROR');
  }
});

test('cancel: 204, kept as cancelled, 204 again; 404 WAITLIST_ENTRY_NOT_FOUND when missing or foreign', async (t) => {
  const { db } = database();
  const w = await world();
  const other = await makePartner(db);
  await grants.grant(db, other.partnerId, w.venueId);
  const entry = (await join(server(), w.apiKey, w.target)).body.entry;

  const foreign = await remove(other.apiKey, entry.id);
  t.is(foreign.status, 404);
  t.is(foreign.body.error, 'WAITLIST_ENTRY_NOT_FOUND');
  assertDocumented(t, 'DELETE /waitlist/{entryId}', foreign);
  t.is((await remove(w.apiKey, randomUUID())).status, 404);
  t.is((await remove(w.apiKey, 'nope')).status, 400);

  const res = await remove(w.apiKey, entry.id);
  t.is(res.status, 204);
  t.is(res.text, '');
  assertDocumented(t, 'DELETE /waitlist/{entryId}', res);
  t.is((await remove(w.apiKey, entry.id)).status, 204);
  const shown = await list(w.apiKey, w.query);
  t.like(shown.body.data[0], { id: entry.id, status: 'cancelled' });

  // A cancelled entry can join again: the same entry, waiting.
  const again = await join(server(), w.apiKey, w.target);
  t.like(again.body.entry, { id: entry.id, status: 'waiting' });

  // After the grant is withdrawn the entries stay readable; changing them is 403.
  await grants.revoke(db, w.partnerId, w.venueId);
  t.is((await list(w.apiKey, w.query)).body.data.length, 1);
  const revoked = await remove(w.apiKey, entry.id);
  t.is(revoked.status, 403);
  t.is(revoked.body.error, 'VENUE_NOT_AUTHORIZED');
});
