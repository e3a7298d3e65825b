import test, { type ExecutionContext } from 'ava';
import { hashApiKey } from '../../db/rules/api-key.ts';
import { issueKey } from '../../db/cli/partner-commands.ts';
import * as apiKeys from '../../db/queries/api-keys.ts';
import { useTestDatabase } from '../helpers/database.ts';
import { makePartner, makeVenue } from '../helpers/factories.ts';
import { call, useTestServer } from '../helpers/http.ts';
import { assertDocumented } from '../helpers/openapi.ts';

const database = useTestDatabase(test);
const server = useTestServer(test, database);

const VENUES = '/api/v1/partner/venues';

/** Every 401 looks the same, whatever the cause: the body never hints why. */
async function assertUnauthorized(t: ExecutionContext, key: string | undefined, why: string) {
  const res = await call(server(), 'GET', VENUES, key === undefined ? {} : { key });
  t.is(res.status, 401, why);
  t.is(res.body.error, 'UNAUTHORIZED', why);
  t.is(res.body.message, 'A valid x-api-key header is required.', why);
  t.false(res.headers.has('x-ratelimit-remaining'), `${why}: an unknown key is not rate limited`);
  t.is(res.headers.get('cache-control'), 'no-store', why);
  assertDocumented(t, 'GET /partner/venues', res);
}

test('a missing, empty, malformed or unknown key is 401 UNAUTHORIZED with no hint why', async (t) => {
  await assertUnauthorized(t, undefined, 'missing');
  await assertUnauthorized(t, '', 'empty');
  await assertUnauthorized(t, 'abc', 'too short');
  await assertUnauthorized(t, 'z'.repeat(64), 'not hex');
  await assertUnauthorized(t, 'a'.repeat(64), 'unknown');
  await assertUnauthorized(t, `${'a'.repeat(64)}\u00e9`, 'non-ascii');
});

test('a live key resolves to its partner', async (t) => {
  const { db } = database();
  const { partnerId, apiKey } = await makePartner(db);
  const venueId = await makeVenue(db, { grantTo: [partnerId] });
  const res = await call(server(), 'GET', VENUES, { key: apiKey });
  t.is(res.status, 200);
  t.deepEqual(
    res.body.data.map((v: { venue_id: string }) => v.venue_id),
    [venueId],
  );
  const upper = await call(server(), 'GET', VENUES, { key: apiKey.toUpperCase() });
  t.is(upper.status, 200, 'hex is case-insensitive');
});

test('no cache may keep a keyed answer: Cache-Control no-store on answers and refusals alike', async (t) => {
  const { db } = database();
  const { partnerId, apiKey } = await makePartner(db, { rateLimit: 3 });
  const venueId = await makeVenue(db, { grantTo: [partnerId] });
  const answers = [
    await call(server(), 'GET', VENUES, { key: apiKey }),
    await call(server(), 'GET', `${VENUES}/${venueId}`, { key: apiKey }),
    await call(server(), 'GET', '/api/v1/no-such-route', { key: apiKey }),
    await call(server(), 'GET', VENUES, { key: apiKey }),
  ];
  t.deepEqual(
    answers.map((res) => [res.status, res.headers.get('cache-control')]),
    [
      [200, 'no-store'],
      [200, 'no-store'],
      [404, 'no-store'],
      [429, 'no-store'],
    ],
  );
  assertDocumented(t, 'GET /partner/venues', answers[0]!);
});

test('a revoked key is 401; a replacement key works', async (t) => {
  const { db } = database();
  const { partnerId, apiKey } = await makePartner(db);
  t.is(await apiKeys.revokeAll(db, partnerId), 1);
  await assertUnauthorized(t, apiKey, 'revoked');
  const replacement = await issueKey(db, partnerId);
  t.is((await call(server(), 'GET', VENUES, { key: replacement })).status, 200);
});

test('an expired key is 401, a key expiring later works', async (t) => {
  const { db } = database();
  const { partnerId } = await makePartner(db);
  const expired = await issueKey(db, partnerId, new Date(Date.now() - 1000));
  await assertUnauthorized(t, expired, 'expired');
  const later = await issueKey(db, partnerId, new Date(Date.now() + 3_600_000));
  t.is((await call(server(), 'GET', VENUES, { key: later })).status, 200);
});

test('revoking counts only the keys that still worked (key:revoke prints that number)', async (t) => {
  const { db } = database();
  const { partnerId } = await makePartner(db);
  await issueKey(db, partnerId, new Date(Date.now() - 1000));
  t.is(await apiKeys.revokeAll(db, partnerId), 1, 'the live key, not the one already expired');
  t.is(await apiKeys.revokeAll(db, partnerId), 0);
});

test('only a hash of the key is stored', async (t) => {
  const { db } = database();
  const { partnerId, apiKey } = await makePartner(db);
  const rows = await db('api_keys').where({ partner_id: partnerId });
  t.is(rows.length, 1);
  t.is(rows[0].key_hash, hashApiKey(apiKey));
  t.false(JSON.stringify(rows).includes(apiKey));
});

test('health and the OpenAPI document need no key and are not counted', async (t) => {
  for (const path of ['/health', '/api/v1/health', '/openapi.json', '/api/v1/openapi.json']) {
    const res = await call(server(), 'GET', path);
    t.is(res.status, 200, path);
    t.false(res.headers.has('x-ratelimit-remaining'), path);
  }
});
