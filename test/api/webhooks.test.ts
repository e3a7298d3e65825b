import test from 'ava';
import { REFUSED_TARGET } from '../../db/rules/webhook-targets.ts';
import { randomUUID } from 'node:crypto';
import { testConfig, useTestDatabase } from '../helpers/database.ts';
import { makePartner } from '../helpers/factories.ts';
import { call, startApp, useTestServer } from '../helpers/http.ts';
import { assertDocumented } from '../helpers/openapi.ts';
import { publishedEvent } from '../helpers/events.ts';

const database = useTestDatabase(test);
const server = useTestServer(test, database);

const create = (key: string, body: Record<string, unknown>) =>
  call(server(), 'POST', '/api/v1/partner/webhooks', { key, body });

test('subscribe: 201 with the secret once; the list never shows it; rotation returns a new one', async (t) => {
  const { db } = database();
  const { partnerId, apiKey } = await makePartner(db);
  const created = await create(apiKey, {
    endpoint_url: 'https://partner.example.com/hooks',
    event_types: ['booking_created', 'hold_created', 'booking_created'],
    partner_id: 'someone-else',
  });
  t.is(created.status, 201, created.text);
  assertDocumented(t, 'POST /partner/webhooks', created);
  t.is(created.body.success, true);
  t.regex(created.body.secret_key, /^[0-9a-f]{64}$/);
  t.like(created.body.data, {
    partner_id: partnerId,
    endpoint_url: 'https://partner.example.com/hooks',
    event_types: ['booking_created', 'hold_created'],
    is_active: true,
  });
  t.false('secret_key' in created.body.data);

  const list = await call(server(), 'GET', '/api/v1/partner/webhooks', { key: apiKey });
  t.is(list.status, 200);
  assertDocumented(t, 'GET /partner/webhooks', list);
  t.like(list.body, { success: true, partner_id: partnerId, count: 1 });
  t.false(list.text.includes(created.body.secret_key));

  const rotated = await call(
    server(),
    'POST',
    `/api/v1/partner/webhooks/${created.body.data.id}/rotate-secret`,
    { key: apiKey },
  );
  t.is(rotated.status, 200);
  assertDocumented(t, 'POST /partner/webhooks/{id}/rotate-secret', rotated);
  t.not(rotated.body.secret_key, created.body.secret_key);
  t.is(
    (await db('webhook_subscriptions').where({ id: created.body.data.id }).first()).secret_key,
    rotated.body.secret_key,
  );

  const stranger = await makePartner(db);
  for (const id of [created.body.data.id, randomUUID()]) {
    const res = await call(server(), 'POST', `/api/v1/partner/webhooks/${id}/rotate-secret`, {
      key: stranger.apiKey,
    });
    t.is(res.status, 404);
    t.is(res.body.error, 'SUBSCRIPTION_NOT_FOUND');
  }
});

test('validation: a URL, at least one known event type; HTTPS only in production', async (t) => {
  const { apiKey } = await makePartner(database().db);
  for (const [body, field] of [
    [{ event_types: ['hold_created'] }, 'endpoint_url'],
    [{ endpoint_url: 'not a url', event_types: ['hold_created'] }, 'endpoint_url'],
    [{ endpoint_url: 'ftp://example.com/x', event_types: ['hold_created'] }, 'endpoint_url'],
    [{ endpoint_url: 'https://example.com/x', event_types: [] }, 'event_types'],
    [{ endpoint_url: 'https://example.com/x', event_types: ['booking_confirmed'] }, 'event_types.0'],
    [{ endpoint_url: 'https://example.com/x' }, 'event_types'],
  ] as const) {
    const res = await create(apiKey, body);
    t.is(res.status, 400, JSON.stringify(body));
    t.true(
      res.body.details.some((d: { field: string }) => d.field === field),
      res.text,
    );
  }
  t.is(
    (await create(apiKey, { endpoint_url: 'http://example.com/x', event_types: ['hold_created'] })).status,
    201,
    'http on local',
  );
  const production = await startApp(database(), { config: testConfig({ SERVICE_ENV: 'production' }) });
  try {
    const res = await call(production, 'POST', '/api/v1/partner/webhooks', {
      key: apiKey,
      body: { endpoint_url: 'http://example.com/x', event_types: ['hold_created'] },
    });
    t.is(res.status, 400);
    t.is(res.body.details[0].message, 'must use https');
  } finally {
    await production.close();
  }
});

test('endpoints resolving to private addresses are refused when private targets are not allowed', async (t) => {
  const { apiKey } = await makePartner(database().db);
  const sandbox = await startApp(database(), { config: testConfig({ SERVICE_ENV: 'sandbox' }) });
  try {
    for (const url of [
      'https://127.0.0.1/x',
      'https://localhost/x',
      'https://10.1.2.3/x',
      'https://[::1]/x',
      'https://169.254.169.254/latest',
    ]) {
      const res = await call(sandbox, 'POST', '/api/v1/partner/webhooks', {
        key: apiKey,
        body: { endpoint_url: url, event_types: ['hold_created'] },
      });
      t.is(res.status, 400, url);
      t.deepEqual(res.body.details, [{ field: 'endpoint_url', in: 'body', message: REFUSED_TARGET }], url);
    }
    // A name that does not resolve gets the very same answer, naming neither host nor address.
    const answers = [];
    for (const url of ['https://no-such-host.invalid/x', 'https://127.0.0.1/x']) {
      const res = await call(sandbox, 'POST', '/api/v1/partner/webhooks', {
        key: apiKey,
        body: { endpoint_url: url, event_types: ['hold_created'] },
      });
      answers.push([res.status, res.body.error, res.body.message, res.body.details]);
    }
    t.deepEqual(answers[0], answers[1]);
  } finally {
    await sandbox.close();
  }
});

test('at most 10 subscriptions per partner, even when created at once', async (t) => {
  const { apiKey } = await makePartner(database().db);
  const results = await Promise.all(
    Array.from({ length: 14 }, (_, i) =>
      create(apiKey, { endpoint_url: `https://example.com/${i}`, event_types: ['hold_created'] }),
    ),
  );
  t.is(results.filter((r) => r.status === 201).length, 10);
  const refused = results.filter((r) => r.status === 409);
  t.is(refused.length, 4);
  t.true(refused.every((r) => r.body.error === 'SUBSCRIPTION_LIMIT_REACHED'));
  assertDocumented(t, 'POST /partner/webhooks', refused[0]!);
});

test('observability counts only your deliveries; redelivery re-queues only your dead letters', async (t) => {
  const { db } = database();
  const { partnerId, apiKey } = await makePartner(db);
  const empty = await call(server(), 'GET', '/api/v1/partner/observability', { key: apiKey });
  t.deepEqual(empty.body, {
    success: true,
    partner_id: partnerId,
    deliveries: { pending: 0, delivered: 0, failed: 0, dead_letter: 0 },
    dead_letters: [],
  });
  assertDocumented(t, 'GET /partner/observability', empty);

  // A dead letter, as five failed attempts leave it (the delivery worker's own tests make real ones).
  const sub = await create(apiKey, {
    endpoint_url: 'https://example.com/dead',
    event_types: ['hold_created'],
  });
  const eventId = await publishedEvent(db, partnerId, randomUUID());
  const attemptId = randomUUID();
  const [delivery] = await db('webhook_deliveries')
    .insert({
      event_id: eventId,
      subscription_id: sub.body.data.id,
      partner_id: partnerId,
      status: 'dead_letter',
      attempts: 5,
      last_attempt_id: attemptId,
      last_status_code: 503,
      last_error: 'the endpoint answered 503',
      last_attempt_at: db.fn.now(),
    })
    .returning('*');
  await db('webhook_attempts').insert({
    id: attemptId,
    delivery_id: delivery.id,
    attempt: 5,
    started_at: db.fn.now(),
  });

  const observed = await call(server(), 'GET', '/api/v1/partner/observability', { key: apiKey });
  assertDocumented(t, 'GET /partner/observability', observed);
  t.is(observed.body.deliveries.dead_letter, 1);
  t.like(observed.body.dead_letters[0], {
    delivery_id: attemptId,
    event_id: eventId,
    event_type: 'hold_created',
    subscription_id: sub.body.data.id,
    attempts: 5,
    last_status_code: 503,
    last_error: 'the endpoint answered 503',
  });

  const stranger = await makePartner(db);
  const foreign = await call(server(), 'POST', `/api/v1/partner/webhooks/deliveries/${attemptId}/redeliver`, {
    key: stranger.apiKey,
  });
  t.is(foreign.status, 404);
  t.is(foreign.body.error, 'DELIVERY_NOT_FOUND');
  t.is(
    (await call(server(), 'GET', '/api/v1/partner/observability', { key: stranger.apiKey })).body.dead_letters
      .length,
    0,
  );

  const redelivered = await call(
    server(),
    'POST',
    `/api/v1/partner/webhooks/deliveries/${attemptId}/redeliver`,
    { key: apiKey, headers: { 'x-request-id': 'redeliver-request-1' } },
  );
  t.is(redelivered.status, 202, redelivered.text);
  assertDocumented(t, 'POST /partner/webhooks/deliveries/{deliveryId}/redeliver', redelivered);
  t.deepEqual(redelivered.body, {
    success: true,
    message: 'Redelivery queued.',
    event_id: eventId,
    status: 'pending',
  });
  const requeued = await db('webhook_deliveries').where({ id: delivery.id }).first();
  t.like(requeued, { status: 'pending', attempts: 0 });
  t.truthy(requeued.next_attempt_id, 'the first new attempt is named');
  t.true(new Date(requeued.next_attempt_at).getTime() <= Date.now(), 'and due now');
  t.is(
    JSON.parse(requeued.trace as string).request_id,
    'redeliver-request-1',
    'its attempts carry the request that caused them',
  );

  const again = await call(server(), 'POST', `/api/v1/partner/webhooks/deliveries/${attemptId}/redeliver`, {
    key: apiKey,
  });
  t.is(again.status, 409);
  t.is(again.body.error, 'DELIVERY_NOT_DEAD_LETTERED');
});
