/**
 * webhook.fanout and webhook.deliver, their handlers called directly, with nock standing in for
 * partners' endpoints: the payload, the six headers and the signature; every kind of failure; the
 * retry schedule to the dead letter; fresh signatures per attempt and secret rotation. Serial:
 * nock is process-wide, and one test cleaning up must not remove another test's interceptors.
 */
import test from 'ava';
import nock from 'nock';
import { randomUUID } from 'node:crypto';
import { createServer, type AddressInfo } from 'node:net';
import type { Config } from '../../db/config.ts';
import { webhookDeliver } from '../../workers/webhook-deliver.ts';
import { webhookFanout } from '../../workers/webhook-fanout.ts';
import { verifyWebhook } from '../../workers/webhook-signature.ts';
import { gridSlots, hold, makeBookingWorld } from '../helpers/booking.ts';
import { testConfig, useTestDatabase } from '../helpers/database.ts';
import { makePartner } from '../helpers/factories.ts';
import { call, useTestServer } from '../helpers/http.ts';
import { subscribe } from '../helpers/webhooks.ts';
import * as grants from '../../db/queries/venue-grants.ts';

const database = useTestDatabase(test);
const server = useTestServer(test, database);
test.before(() => {
  nock.disableNetConnect();
  nock.enableNetConnect(/127\.0\.0\.1|localhost|\.invalid/);
});
test.afterEach.always(() => nock.cleanAll());
test.after.always(() => nock.enableNetConnect());

let hostCounter = 0;
type Delivery = Awaited<ReturnType<typeof deliveryFor>>;

/** Points a delivery's subscription somewhere else (a closed port, an unresolvable host). */
function retarget(d: Delivery, endpointUrl: string) {
  return database().db('webhook_subscriptions').where({ id: d.sub.id }).update({ endpoint_url: endpointUrl });
}

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const probe = createServer().listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as AddressInfo;
      probe.close(() => resolve(port));
    });
  });
}

/** A hold at a new venue, a subscription to a fresh nock host, and the fanned-out delivery. */
async function deliveryFor(config?: Config) {
  const { db, boss, log } = database();
  const host = `https://partner${++hostCounter}.example.test`;
  const w = await makeBookingWorld(db);
  const sub = await subscribe(server(), w.apiKey, `${host}/hooks`, ['hold_created']);
  const [slot] = await gridSlots(db, w.venueId, w.court);
  const held = await hold(server(), w.apiKey, {
    venue_id: w.venueId,
    resource_id: w.court,
    slot_start: slot!.slot_start,
  });
  const event = await db('events').where({ hold_id: held.body.hold_id, event_type: 'hold_created' }).first();
  const deps = { db, boss, log, config: config ?? database().config };
  await webhookFanout.handle({ event_id: event.id }, deps, { id: randomUUID() } as never);
  const delivery = await db('webhook_deliveries').where({ event_id: event.id }).first();
  const run = () => webhookDeliver.handle({ delivery_id: delivery.id }, deps, { id: randomUUID() } as never);
  const state = () => db('webhook_deliveries').where({ id: delivery.id }).first();
  return {
    ...w,
    host,
    sub,
    event,
    holdId: held.body.hold_id as string,
    deliveryId: delivery.id as string,
    run,
    state,
  };
}

test.serial(
  'a delivery carries the payload, the six headers and a signature the partner-side function verifies',
  async (t) => {
    const d = await deliveryFor();
    let seen: { headers: Record<string, string>; body: string } | undefined;
    const scope = nock(d.host)
      .post('/hooks')
      .reply(async (request: Request) => {
        seen = { headers: Object.fromEntries(request.headers), body: await request.text() };
        return [204];
      });
    await d.run();
    scope.done();
    t.truthy(seen);
    const headers = seen!.headers;
    t.is(headers['content-type'], 'application/json');
    t.is(headers['x-webhook-event'], 'hold_created');
    t.is(headers['x-delivery-attempt'], '1');
    t.regex(headers['x-service-signature']!, /^sha256=[0-9a-f]{64}$/);
    t.true(Math.abs(Number(headers['x-service-timestamp']) - Date.now() / 1000) < 5);
    const verdict = verifyWebhook({ rawBody: seen!.body, headers, secret: d.sub.secret });
    t.true(verdict.ok);
    if (!verdict.ok) return;
    t.like(verdict.event, {
      event_id: d.event.id,
      event_type: 'hold_created',
      venue_id: d.venueId,
      hold_id: d.holdId,
      booking_id: null,
      partner_id: d.partnerId,
      delivery_id: headers['x-delivery-id'],
    });
    t.is(verdict.event.timestamp, new Date(d.event.occurred_at).toISOString());
    t.like(verdict.event.details, { resource_id: d.court, price_rupees: 500 });
    t.truthy(verdict.event.details.hold_expiry_at);
    t.is(verifyWebhook({ rawBody: seen!.body, headers, secret: 'wrong' }).ok, false);
    t.like(await d.state(), { status: 'delivered', attempts: 1, last_status_code: 204, last_error: null });
  },
);

test.serial(
  'every kind of failure is a failed attempt recorded with its status or error, and retried later',
  async (t) => {
    const quick = testConfig({ WEBHOOK_TIMEOUT_MS: '300' });
    const closedPort = await freePort();
    const cases: [string, (d: Delivery) => Promise<unknown>, number | null, RegExp][] = [
      ['500', (d) => Promise.resolve(nock(d.host).post('/hooks').reply(500)), 500, /answered 500/],
      ['404', (d) => Promise.resolve(nock(d.host).post('/hooks').reply(404, 'nope')), 404, /answered 404/],
      [
        'redirect',
        (d) =>
          Promise.resolve(
            nock(d.host).post('/hooks').reply(302, '', { location: 'https://elsewhere.example.test/' }),
          ),
        302,
        /answered 302/,
      ],
      [
        'timeout',
        (d) => Promise.resolve(nock(d.host).post('/hooks').delay(1000).reply(200)),
        null,
        /no answer within 300 ms/,
      ],
      ['refused', (d) => retarget(d, `http://127.0.0.1:${closedPort}/hooks`), null, /ECONNREFUSED/],
      ['dns', (d) => retarget(d, 'https://no-such-host.invalid/hooks'), null, /ENOTFOUND|EAI_AGAIN/],
    ];
    for (const [name, arrange, status, error] of cases) {
      const d = await deliveryFor(quick);
      await arrange(d);
      await d.run();
      const state = await d.state();
      t.is(state.status, 'failed', name);
      t.is(state.attempts, 1, name);
      t.is(state.last_status_code, status, name);
      t.regex(state.last_error, error, name);
      const inSeconds = (new Date(state.next_attempt_at).getTime() - Date.now()) / 1000;
      t.true(inSeconds > 295 && inSeconds <= 300, `${name}: next attempt in 5 minutes, got ${inSeconds}`);
    }
  },
);

test.serial(
  'five attempts on the 5/15/30/60-minute schedule, then a dead letter that is never retried by itself',
  async (t) => {
    const { db } = database();
    const d = await deliveryFor();
    const delays: number[] = [];
    const deliveryIds = new Set<string>();
    const eventIds = new Set<string>();
    for (let attempt = 1; attempt <= 5; attempt++) {
      nock(d.host)
        .post('/hooks')
        .reply(async (request: Request) => {
          deliveryIds.add(request.headers.get('x-delivery-id')!);
          eventIds.add((JSON.parse(await request.text()) as { event_id: string }).event_id);
          t.is(request.headers.get('x-delivery-attempt'), String(attempt));
          return [503];
        });
      await d.run();
      const state = await d.state();
      if (attempt < 5) {
        t.is(state.status, 'failed');
        delays.push(Math.round((new Date(state.next_attempt_at).getTime() - Date.now()) / 60_000));
      } else {
        t.is(state.status, 'dead_letter');
        t.is(state.next_attempt_at, null);
      }
    }
    t.deepEqual(delays, [5, 15, 30, 60]);
    t.is(deliveryIds.size, 5, 'a new delivery_id per attempt');
    t.deepEqual([...eventIds], [d.event.id], 'the same event_id every time');
    const jobs = await db.raw(
      "select count(*)::int as n from pgboss.job where name = 'webhook.deliver' and data->>'delivery_id' = ?",
      [d.deliveryId],
    );
    t.is(jobs.rows[0].n, 5, 'the first job and one per retry, none after the dead letter');
    await d.run(); // a stray run of the dead letter sends nothing
    t.is((await d.state()).attempts, 5);
    t.is(
      Number((await db('webhook_attempts').where({ delivery_id: d.deliveryId }).count({ n: '*' }))[0]!.n),
      5,
    );
  },
);

test.serial(
  'each attempt has a fresh timestamp and signature, signed with the secret current at the time',
  async (t) => {
    const d = await deliveryFor();
    const attempts: { headers: Record<string, string>; body: string }[] = [];
    const capture = async (request: Request) => {
      attempts.push({ headers: Object.fromEntries(request.headers), body: await request.text() });
      return [attempts.length === 1 ? 500 : 200] as const;
    };
    nock(d.host).post('/hooks').reply(capture);
    await d.run();
    const rotated = await call(server(), 'POST', `/api/v1/partner/webhooks/${d.sub.id}/rotate-secret`, {
      key: d.apiKey,
    });
    t.is(rotated.status, 200);
    const newSecret = rotated.body.secret_key as string;
    t.not(newSecret, d.sub.secret);
    nock(d.host).post('/hooks').reply(capture);
    await d.run();
    t.like(await d.state(), { attempts: 2, status: 'delivered' });
    t.is(attempts.length, 2);
    const [first, second] = attempts as [(typeof attempts)[0], (typeof attempts)[0]];
    t.not(first.headers['x-service-signature'], second.headers['x-service-signature']);
    t.not(first.headers['x-delivery-id'], second.headers['x-delivery-id']);
    t.true(verifyWebhook({ rawBody: first.body, headers: first.headers, secret: d.sub.secret }).ok);
    t.false(
      verifyWebhook({ rawBody: second.body, headers: second.headers, secret: d.sub.secret }).ok,
      'old secret',
    );
    t.true(
      verifyWebhook({ rawBody: second.body, headers: second.headers, secret: newSecret }).ok,
      'new secret',
    );
    t.is((await d.state()).status, 'delivered');
  },
);

test.serial('a target that resolves to a non-public address is refused at delivery time', async (t) => {
  const strict = testConfig({ SERVICE_ENV: 'sandbox' });
  const d = await deliveryFor();
  await database()
    .db('webhook_subscriptions')
    .where({ id: d.sub.id })
    .update({ endpoint_url: 'http://127.0.0.1:9/hooks' });
  const { db, boss, log } = database();
  await webhookDeliver.handle({ delivery_id: d.deliveryId }, { db, boss, log, config: strict }, {
    id: randomUUID(),
  } as never);
  const state = await d.state();
  t.is(state.status, 'failed');
  t.regex(state.last_error, /non-public address/);
});

test.serial(
  'fan-out reaches every granted partner that subscribed to the type, once, however often it runs',
  async (t) => {
    const { db, boss, log, config } = database();
    const w = await makeBookingWorld(db);
    const other = await makePartner(db);
    const ungranted = await makePartner(db);
    await grants.grant(db, other.partnerId, w.venueId);
    const own = await subscribe(server(), w.apiKey, 'https://own.example.test/h', ['hold_created']);
    const theirs = await subscribe(server(), other.apiKey, 'https://other.example.test/h', [
      'hold_created',
      'booking_created',
    ]);
    await subscribe(server(), other.apiKey, 'https://other.example.test/bookings', ['booking_created']);
    await subscribe(server(), ungranted.apiKey, 'https://ungranted.example.test/h', ['hold_created']);
    const [slot] = await gridSlots(db, w.venueId, w.court);
    const held = await hold(server(), w.apiKey, {
      venue_id: w.venueId,
      resource_id: w.court,
      slot_start: slot!.slot_start,
    });
    const event = await db('events').where({ hold_id: held.body.hold_id }).first();
    const deps = { db, boss, log, config };
    await Promise.all(
      [1, 2, 3].map(() => webhookFanout.handle({ event_id: event.id }, deps, { id: randomUUID() } as never)),
    );
    const subs = await db('webhook_deliveries').where({ event_id: event.id }).pluck('subscription_id');
    t.deepEqual([...subs].sort(), [own.id, theirs.id].sort());
  },
);
