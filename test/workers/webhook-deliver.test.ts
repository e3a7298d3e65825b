/**
 * Fan-out and attempts, run by hand as the dispatcher runs them (claim, send, record), with real
 * local receivers standing in for partners' endpoints and a test resolver naming them: the payload,
 * the six headers and the signature; every kind of failure; the retry schedule to the dead letter;
 * fresh signatures per attempt and secret rotation. Serial: receivers count requests, and the
 * schedule assertions read the clock.
 */
import test, { type ExecutionContext } from 'ava';
import { Webhook as StandardWebhook, WebhookVerificationError } from 'standardwebhooks';
import type { Config } from '../../db/platform/config.ts';
import * as grants from '../../db/queries/venue-grants.ts';
import { NON_PUBLIC_TARGET, UNRESOLVED_TARGET } from '../../workers/webhook-http.ts';
import { verifyWebhook } from '../../client/src/index.ts';
import { holdSlot, makeBookingWorld } from '../helpers/booking.ts';
import { testConfig, useTestDatabase } from '../helpers/database.ts';
import { makePartner } from '../helpers/factories.ts';
import { call, useTestServer } from '../helpers/http.ts';
import {
  deliveryFor,
  localResolver,
  startReceiver,
  subscribe,
  testResolver,
  type Delivery,
  type Receiver,
} from '../helpers/webhooks.ts';

const database = useTestDatabase(test);
const server = useTestServer(test, database);
const dns = localResolver();
let hostCounter = 0;

/** A receiver for one test, closed when it ends; its secret is read when a request arrives. */
async function receiver(t: ExecutionContext, secret: () => string = () => ''): Promise<Receiver> {
  const r = await startReceiver(secret);
  t.teardown(() => r.close());
  return r;
}

/** A delivery to `r` under a fresh host name that the test resolver maps to 127.0.0.1. */
function deliveryTo(r: Receiver, config?: Config) {
  const url = `http://partner${++hostCounter}.example.test:${r.port}/hooks`;
  return deliveryFor(database(), server(), url, { lookup: dns.lookup, ...(config && { config }) });
}

/** Points a delivery's subscription somewhere else (a closed port, an unresolvable host). */
function retarget(d: Delivery, endpointUrl: string) {
  return database().db('webhook_subscriptions').where({ id: d.sub.id }).update({ endpoint_url: endpointUrl });
}

/**
 * A port nothing listens on: 1 (tcpmux) is privileged and unused, so connecting is refused at once.
 * A probed free port was not: a receiver started later by listen(0) could be given it (seen: the
 * "refused" case got a 302 from the redirect case's receiver).
 */
const CLOSED_PORT = 1;

test.serial(
  'a delivery carries the payload, the six headers and a signature the partner-side function verifies',
  async (t) => {
    let secret = '';
    const r = await receiver(t, () => secret);
    r.respond = () => 204;
    const d = await deliveryTo(r);
    secret = d.sub.secret;
    const attemptId = (await d.state()).next_attempt_id as string;
    await d.runDue();
    t.is(r.received.length, 1);
    const seen = r.received[0]!;
    const headers = seen.headers as Record<string, string>;
    t.is(headers['content-type'], 'application/json');
    t.is(headers['x-webhook-event'], 'hold_created');
    t.is(headers['x-delivery-attempt'], '1');
    t.is(headers['x-delivery-id'], attemptId, 'the attempt named when it was scheduled');
    t.regex(headers['x-service-signature']!, /^sha256=[0-9a-f]{64}$/);
    t.true(Math.abs(Number(headers['x-service-timestamp']) - Date.now() / 1000) < 5);
    t.is(seen.rejection, undefined);
    const event = seen.event!;
    t.like(event, {
      event_id: d.event.id,
      event_type: 'hold_created',
      venue_id: d.venueId,
      hold_id: d.holdId,
      booking_id: null,
      partner_id: d.partnerId,
      delivery_id: headers['x-delivery-id'],
    });
    t.is(event.timestamp, new Date(d.event.occurred_at).toISOString());
    t.like(event.details, { resource_id: d.court, price_rupees: 500 });
    t.truthy(event.details.hold_expiry_at);
    t.is(verifyWebhook({ rawBody: seen.rawBody, headers, secret: 'wrong' }).ok, false);
    t.like(await d.state(), { status: 'delivered', attempts: 1, last_status_code: 204, last_error: null });
  },
);

test.serial(
  'a delivery whose carried trace is not a JSON object is still sent, in a trace of its own',
  async (t) => {
    const r = await receiver(t);
    r.respond = () => 200;
    for (const trace of ['not json', '[1,2]', 'null', '"text"']) {
      const d = await deliveryTo(r);
      await database().db('webhook_deliveries').where({ id: d.deliveryId }).update({ trace });
      const plan = await d.claim();
      t.is(plan?.trace, null, trace);
      await d.finish(plan!);
      t.like(await d.state(), { status: 'delivered', attempts: 1 }, trace);
    }
    t.is(r.received.length, 4);
  },
);

test.serial(
  'every kind of failure is a failed attempt recorded with its status or error, and retried later',
  async (t) => {
    const quick = testConfig({ WEBHOOK_TIMEOUT_MS: '300' });
    const elsewhere = await receiver(t);
    const hang = testResolver(() => null);
    const cases: [string, (d: Delivery, r: Receiver) => unknown, number | null, RegExp][] = [
      ['500', (_, r) => (r.respond = () => 500), 500, /answered 500/],
      ['404', (_, r) => (r.respond = () => 404), 404, /answered 404/],
      [
        'redirect, not followed',
        (_, r) => (r.respond = () => ({ status: 302, headers: { location: elsewhere.url } })),
        302,
        /answered 302/,
      ],
      ['no answer', (_, r) => (r.respond = () => undefined), null, /^no answer within 300 ms$/],
      ['refused', (d) => retarget(d, `http://127.0.0.1:${CLOSED_PORT}/hooks`), null, /ECONNREFUSED/],
      [
        'no such host',
        (d) => retarget(d, 'https://no-such-host.invalid/hooks'),
        null,
        /^the endpoint's host/,
      ],
      [
        'a lookup that never answers',
        (d) => retarget(d, `http://hang.invalid:${CLOSED_PORT}/hooks`),
        null,
        /^no answer within 300 ms$/,
      ],
    ];
    for (const [name, arrange, status, error] of cases) {
      const r = await receiver(t);
      const d = await deliveryTo(r, quick);
      await arrange(d, r);
      const lookup = name === 'a lookup that never answers' ? hang.lookup : dns.lookup;
      await d.runDue({ config: quick, lookup });
      const state = await d.state();
      t.is(state.status, 'failed', name);
      t.is(state.attempts, 1, name);
      t.is(state.last_status_code, status, name);
      t.regex(state.last_error, error, name);
      const inSeconds = (new Date(state.next_attempt_at).getTime() - Date.now()) / 1000;
      t.true(inSeconds > 295 && inSeconds <= 300, `${name}: next attempt in 5 minutes, got ${inSeconds}`);
    }
    t.is(UNRESOLVED_TARGET, "the endpoint's host does not resolve");
    t.is(elsewhere.received.length, 0, 'the redirect was not followed');
    t.true(hang.calls.length >= 1, 'the hanging resolver was asked');
  },
);

test.serial(
  'five attempts on the 5/15/30/60-minute schedule, then a dead letter that is never retried by itself',
  async (t) => {
    const { db } = database();
    let secret = '';
    const r = await receiver(t, () => secret);
    r.respond = () => 503;
    const d = await deliveryTo(r);
    secret = d.sub.secret;
    const delays: number[] = [];
    for (let attempt = 1; attempt <= 5; attempt++) {
      await d.runScheduled();
      t.is(r.received.at(-1)!.headers['x-delivery-attempt'], String(attempt));
      const state = await d.state();
      if (attempt < 5) {
        t.is(state.status, 'failed');
        delays.push(Math.round((new Date(state.next_attempt_at).getTime() - Date.now()) / 60_000));
      } else {
        t.is(state.status, 'dead_letter');
        t.is(state.next_attempt_at, null);
        t.is(state.next_attempt_id, null);
      }
    }
    t.deepEqual(delays, [5, 15, 30, 60]);
    const deliveryIds = r.received.map((x) => x.event!.delivery_id);
    t.is(new Set(deliveryIds).size, 5, 'a new delivery_id per attempt');
    t.deepEqual([...new Set(r.received.map((x) => x.event!.event_id))], [d.event.id], 'the same event_id');
    t.deepEqual(
      await db('webhook_attempts').where({ delivery_id: d.deliveryId }).orderBy('attempt').pluck('id'),
      deliveryIds,
      'one attempt row per attempt, each the delivery_id its request carried',
    );
    await d.makeDue();
    t.is(await d.runDue(), undefined, 'a dead letter has nothing to claim, even when due');
    t.is(r.received.length, 5);
    t.like(await d.state(), { attempts: 5, status: 'dead_letter' });
    t.is((await d.attempts()).length, 5);
  },
);

test.serial(
  'each attempt has a fresh timestamp and signature, signed with the secret current at the time',
  async (t) => {
    const r = await receiver(t);
    r.respond = () => (r.received.length === 1 ? 500 : 200);
    const d = await deliveryTo(r);
    await d.runScheduled();
    const rotated = await call(server(), 'POST', `/api/v1/partner/webhooks/${d.sub.id}/rotate-secret`, {
      key: d.apiKey,
    });
    t.is(rotated.status, 200);
    const newSecret = rotated.body.secret_key as string;
    t.not(newSecret, d.sub.secret);
    await d.runScheduled();
    t.like(await d.state(), { attempts: 2, status: 'delivered' });
    t.is(r.received.length, 2);
    const [first, second] = r.received as [Receiver['received'][0], Receiver['received'][0]];
    const verify = (x: typeof first, s: string) =>
      verifyWebhook({ rawBody: x.rawBody, headers: x.headers, secret: s }).ok;
    t.not(first.headers['x-service-signature'], second.headers['x-service-signature']);
    t.not(first.headers['x-delivery-id'], second.headers['x-delivery-id']);
    t.true(verify(first, d.sub.secret));
    t.false(verify(second, d.sub.secret), 'old secret');
    t.true(verify(second, newSecret), 'new secret');
  },
);

test.serial(
  'Standard Webhooks: the standardwebhooks library verifies each attempt with the secret as returned; a retry keeps its webhook-id; after a rotation only the new secret verifies',
  async (t) => {
    const r = await receiver(t);
    r.respond = () => (r.received.length === 1 ? 500 : 200);
    const d = await deliveryTo(r);
    t.regex(d.sub.standardSecret, /^whsec_[A-Za-z0-9+/]+=*$/);
    await d.runScheduled();
    const rotated = await call(server(), 'POST', `/api/v1/partner/webhooks/${d.sub.id}/rotate-secret`, {
      key: d.apiKey,
    });
    const newSecret = rotated.body.standard_webhooks_secret as string;
    t.regex(newSecret, /^whsec_/);
    t.not(newSecret, d.sub.standardSecret);
    await d.runScheduled();
    t.is(r.received.length, 2);
    const [first, second] = r.received as [Receiver['received'][0], Receiver['received'][0]];
    const verified = (x: typeof first, secret: string) => {
      try {
        return new StandardWebhook(secret).verify(x.rawBody, x.headers as Record<string, string>);
      } catch (error) {
        if (error instanceof WebhookVerificationError) return 'refused';
        throw error;
      }
    };
    t.like(verified(first, d.sub.standardSecret), { event_id: d.event.id, event_type: 'hold_created' });
    t.like(verified(second, newSecret), { event_id: d.event.id });
    t.is(verified(second, d.sub.standardSecret), 'refused', 'the old secret no longer verifies');
    t.is(verified(first, newSecret), 'refused');
    t.is(first.headers['webhook-id'], d.event.id, 'webhook-id is the event_id');
    t.is(second.headers['webhook-id'], first.headers['webhook-id'], 'the same on a retried attempt');
    t.not(first.headers['x-delivery-id'], second.headers['x-delivery-id']);
    t.is(first.headers['webhook-timestamp'], first.headers['x-service-timestamp']);
    t.regex(first.headers['webhook-signature'] as string, /^v1,[A-Za-z0-9+/]{43}=$/);
    // A body changed in transit is refused by the library too.
    t.is(
      verified({ ...second, rawBody: second.rawBody.replace('hold_created', 'hold_expired') }, newSecret),
      'refused',
    );
  },
);

test.serial(
  'an IP-literal target that is not public is refused at delivery time, before sending',
  async (t) => {
    const strict = testConfig({ SERVICE_ENV: 'sandbox' });
    const r = await receiver(t);
    const d = await deliveryTo(r, strict);
    for (const literal of [`127.0.0.1:${r.port}`, `[::ffff:7f00:1]:${r.port}`, '169.254.169.254']) {
      await retarget(d, `http://${literal}/hooks`);
      await d.runScheduled();
      const state = await d.state();
      t.is(state.status, 'failed', literal);
      t.is(state.last_error, NON_PUBLIC_TARGET, literal);
      t.is(state.last_status_code, null, literal);
    }
    t.is(r.received.length, 0);
  },
);

test.serial(
  'fan-out reaches every granted partner that subscribed to the type, once, however often it runs',
  async (t) => {
    const { db } = database();
    const w = await makeBookingWorld(db);
    const other = await makePartner(db);
    const ungranted = await makePartner(db);
    await grants.grant(db, other.partnerId, w.venueId);
    const own = await subscribe(server(), w.apiKey, 'https://own.example.test/h', ['hold_created']);
    const theirs = await subscribe(server(), other.apiKey, 'https://Other.Example.test:8443/h', [
      'hold_created',
      'booking_created',
    ]);
    await subscribe(server(), other.apiKey, 'https://other.example.test/bookings', ['booking_created']);
    await subscribe(server(), ungranted.apiKey, 'https://ungranted.example.test/h', ['hold_created']);
    const held = await holdSlot(server(), w);
    const event = await db('events').where({ hold_id: held.holdId }).first();
    await Promise.all([1, 2, 3].map(() => db.raw('select publish_event(?)', [event.id])));
    const rows = await db('webhook_deliveries').where({ event_id: event.id });
    t.deepEqual(rows.map((row) => row.subscription_id).sort(), [own.id, theirs.id].sort());
    for (const row of rows) {
      t.like(row, { status: 'pending', attempts: 0 }, 'the first attempt is named and due');
      t.truthy(row.next_attempt_id);
      t.true(new Date(row.next_attempt_at).getTime() <= Date.now());
      // The hold's request, which the worker's log lines name (db/platform/tracing.ts).
      t.deepEqual(JSON.parse(row.trace as string), { request_id: held.response.headers.get('x-request-id') });
    }
    const origins = await db('webhook_subscriptions').whereIn('id', [own.id, theirs.id]).pluck('origin');
    t.deepEqual(origins.sort(), ['https://other.example.test:8443', 'https://own.example.test']);
  },
);
