import test from 'ava';
import * as grants from '../../db/queries/venue-grants.ts';
import * as venues from '../../db/queries/venues.ts';
import { useTestDatabase } from '../helpers/database.ts';
import { makePartner, makeResource, makeVenue } from '../helpers/factories.ts';
import { call, useTestServer } from '../helpers/http.ts';
import { assertDocumented } from '../helpers/openapi.ts';

const database = useTestDatabase(test);
const server = useTestServer(test, database);

test('a partner with no grants sees an empty list, not a failure', async (t) => {
  const { apiKey } = await makePartner(database().db);
  await makeVenue(database().db);
  const res = await call(server(), 'GET', '/api/v1/partner/venues', { key: apiKey });
  t.is(res.status, 200);
  t.deepEqual(res.body, { data: [] });
  assertDocumented(t, 'GET /partner/venues', res);
});

test('granted venues are listed with the Venue fields; paused ones show their status', async (t) => {
  const { db } = database();
  const { partnerId, apiKey } = await makePartner(db);
  const active = await makeVenue(db, { name: 'A Arena', city: 'Mumbai', grantTo: [partnerId] });
  const paused = await makeVenue(db, { name: 'B Arena', status: 'paused', grantTo: [partnerId] });
  await makeVenue(db, { name: 'C Arena', status: 'archived', grantTo: [partnerId] });
  await makeVenue(db, { name: 'D Arena' });

  const res = await call(server(), 'GET', '/api/v1/partner/venues', { key: apiKey });
  t.is(res.status, 200);
  t.deepEqual(res.body, {
    data: [
      {
        venue_id: active,
        name: 'A Arena',
        address: '1 Test Road',
        city: 'Mumbai',
        status: 'active',
        timezone: 'Asia/Kolkata',
      },
      {
        venue_id: paused,
        name: 'B Arena',
        address: '1 Test Road',
        city: 'Pune',
        status: 'paused',
        timezone: 'Asia/Kolkata',
      },
    ],
  });
  assertDocumented(t, 'GET /partner/venues', res);
});

test('one venue: 200 {data} when granted, 404 VENUE_NOT_FOUND when not granted, archived or missing', async (t) => {
  const { db } = database();
  const { partnerId, apiKey } = await makePartner(db);
  const other = await makePartner(db);
  const granted = await makeVenue(db, { grantTo: [partnerId] });
  const othersVenue = await makeVenue(db, { grantTo: [other.partnerId] });
  const archived = await makeVenue(db, { status: 'archived', grantTo: [partnerId] });

  const ok = await call(server(), 'GET', `/api/v1/partner/venues/${granted}`, { key: apiKey });
  t.is(ok.status, 200);
  t.is(ok.body.data.venue_id, granted);
  assertDocumented(t, 'GET /partner/venues/{venueId}', ok);

  for (const venueId of [othersVenue, archived, '00000000-0000-4000-8000-000000000000']) {
    for (const suffix of ['', '/resources']) {
      const res = await call(server(), 'GET', `/api/v1/partner/venues/${venueId}${suffix}`, { key: apiKey });
      t.is(res.status, 404);
      t.is(res.body.error, 'VENUE_NOT_FOUND');
      t.is(typeof res.body.request_id, 'string');
      assertDocumented(t, `GET /partner/venues/{venueId}${suffix}`, res);
    }
  }
});

test('withdrawing a grant hides the venue at once', async (t) => {
  const { db } = database();
  const { partnerId, apiKey } = await makePartner(db);
  const venueId = await makeVenue(db, { grantTo: [partnerId] });
  t.is((await call(server(), 'GET', `/api/v1/partner/venues/${venueId}`, { key: apiKey })).status, 200);
  await grants.revoke(db, partnerId, venueId);
  t.is((await call(server(), 'GET', `/api/v1/partner/venues/${venueId}`, { key: apiKey })).status, 404);
  t.deepEqual((await call(server(), 'GET', '/api/v1/partner/venues', { key: apiKey })).body, { data: [] });
});

test('resources: {success, count, data} in creation order; closed_on only when closed some day', async (t) => {
  const { db } = database();
  const { partnerId, apiKey } = await makePartner(db);
  const venueId = await makeVenue(db, { grantTo: [partnerId] });
  const open = await makeResource(db, { venueId, opensAt: '06:30', closesAt: '24:00' });
  const closed = await makeResource(db, {
    venueId,
    closedOn: [7, 1, 3],
    resourceType: 'turf',
    sportCategory: 'football',
  });
  const full = await makeResource(db, { venueId, parts: [open], durationMinutes: 90, priceRupees: 1500 });

  const res = await call(server(), 'GET', `/api/v1/partner/venues/${venueId}/resources`, { key: apiKey });
  t.is(res.status, 200);
  t.is(res.body.success, true);
  t.is(res.body.count, 3);
  t.deepEqual(
    res.body.data.map((r: { resource_id: string }) => r.resource_id),
    [open, closed, full],
  );
  t.deepEqual(res.body.data[0], {
    resource_id: open,
    venue_id: venueId,
    resource_type: 'court',
    sport_category: 'badminton',
    duration_minutes: 60,
    price_rupees: 500,
    operating_hours_start: '06:30',
    operating_hours_end: '24:00',
  });
  t.false('closed_on' in res.body.data[0]);
  t.is(res.body.data[1].closed_on, 'Monday,Wednesday,Sunday');
  t.is(res.body.data[2].duration_minutes, 90);
  assertDocumented(t, 'GET /partner/venues/{venueId}/resources', res);
});

test('a paused venue still lists its resources; an archived one does not', async (t) => {
  const { db } = database();
  const { partnerId, apiKey } = await makePartner(db);
  const venueId = await makeVenue(db, { status: 'paused', grantTo: [partnerId] });
  await makeResource(db, { venueId });
  const res = await call(server(), 'GET', `/api/v1/partner/venues/${venueId}/resources`, { key: apiKey });
  t.is(res.body.count, 1);
  await venues.setStatus(db, venueId, 'archived');
  const gone = await call(server(), 'GET', `/api/v1/partner/venues/${venueId}/resources`, { key: apiKey });
  t.is(gone.status, 404);
});

test('a malformed venue id is a 400 VALIDATION_ERROR naming the path parameter', async (t) => {
  const { apiKey } = await makePartner(database().db);
  for (const id of ['not-a-uuid', '1', "1'%20or%201=1", '%F0%9F%92%A9', 'a'.repeat(300)]) {
    const res = await call(server(), 'GET', `/api/v1/partner/venues/${id}`, { key: apiKey });
    t.is(res.status, 400, id);
    t.is(res.body.error, 'VALIDATION_ERROR');
    t.deepEqual(res.body.details[0].field, 'venueId');
    t.deepEqual(res.body.details[0].in, 'path');
    assertDocumented(t, 'GET /partner/venues/{venueId}', res);
  }
});
