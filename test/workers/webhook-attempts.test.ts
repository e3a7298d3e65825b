/**
 * Attempt identity on the delivery schedule: every attempt is named before it runs, and is claimed
 * at most once, never early, by whichever worker claims first (two at once: one gets it); one in
 * flight is claimed by nobody else, and is taken over only once its lease has passed, exactly once.
 * Claims, sends and records are run by hand, as the dispatcher runs them, against real local
 * receivers.
 */
import test, { type ExecutionContext } from 'ava';
import * as deliveries from '../../db/queries/webhook-deliveries.ts';
import { ABANDONED_ATTEMPT, attemptLeaseSeconds, MAX_ATTEMPTS } from '../../db/rules/webhook-attempts.ts';
import { useTestDatabase } from '../helpers/database.ts';
import { call, useTestServer } from '../helpers/http.ts';
import { waitFor } from '../helpers/wait.ts';
import {
  deliveryFor,
  localResolver,
  startReceiver,
  type Delivery,
  type Receiver,
} from '../helpers/webhooks.ts';

const database = useTestDatabase(test);
const server = useTestServer(test, database);
const dns = localResolver();
let hostCounter = 0;

/** A receiver (closed when the test ends) and a delivery to it through a name the resolver knows. */
async function setUp(t: ExecutionContext): Promise<{ r: Receiver; d: Delivery }> {
  let secret = '';
  const r = await startReceiver(() => secret);
  t.teardown(() => r.close());
  const url = `http://partner${++hostCounter}.example.test:${r.port}/hooks`;
  const d = await deliveryFor(database(), server(), url, { lookup: dns.lookup });
  secret = d.sub.secret;
  return { r, d };
}

/** Makes the receiver hold every answer until `release` is called; then it answers `status`. */
function gate(r: Receiver): { release(status: number): void } {
  let open: (status: number) => void = () => undefined;
  const opened = new Promise<number>((resolve) => (open = resolve));
  r.respond = () => opened;
  return { release: (status) => open(status) };
}

/** Fails attempts until `count` have been made, each run when due, the endpoint answering 503. */
async function failAttempts(d: Delivery, r: Receiver, count: number) {
  r.respond = () => 503;
  for (let i = 0; i < count; i++) await d.runScheduled();
}

/** Moves an attempt in flight back in time, past its lease (as if its worker died long ago). */
async function backdate(d: Delivery, attemptId: string, seconds: number) {
  const { db } = database();
  const ago = db.raw('now() - make_interval(secs => ?)', [seconds]);
  await db('webhook_deliveries').where({ id: d.deliveryId }).update({ last_attempt_at: ago });
  await db('webhook_attempts').where({ id: attemptId }).update({ started_at: ago });
}

/** The lease of the test config's attempts (10 s timeout + margin), and then some. */
const PAST_LEASE_SECONDS = 60;

/**
 * Takes over abandoned attempts as a dispatcher's sweep does; the statuses it moved deliveries to.
 * A sweep looks at every delivery of the file's database, so the tests that sweep run one at a time
 * (test.serial, before the others): run side by side, one test's sweep took over another's
 * backdated attempt.
 */
const sweep = () => {
  const { db, config } = database();
  return deliveries.takeOverAbandoned(db, {
    leaseSeconds: attemptLeaseSeconds(config),
    maxAttempts: MAX_ATTEMPTS,
    retryDelays: config.webhookRetryDelays,
    limit: 100,
    error: ABANDONED_ATTEMPT,
  });
};

test('an attempt claimed by two workers at once is sent once', async (t) => {
  const { r, d } = await setUp(t);
  const results = await Promise.all([d.runDue(), d.runDue(), d.runDue()]);
  t.is(results.filter(Boolean).length, 1, 'one claim got it');
  t.is(r.received.length, 1, 'one request');
  t.like(await d.state(), { status: 'delivered', attempts: 1 });
});

test.serial(
  'an attempt in flight is claimed by nobody else; once it is recorded nothing is left',
  async (t) => {
    const { r, d } = await setUp(t);
    const held = gate(r);
    const plan = (await d.claim())!;
    const first = d.finish(plan);
    await waitFor(() => r.received.length === 1);
    t.is(await d.claim(), undefined, 'in flight: not claimable');
    t.deepEqual(await sweep(), [], 'within its lease: not taken over');
    held.release(200);
    t.like(await first, { recorded: true });
    t.like(await d.state(), { status: 'delivered', attempts: 1 });
    await d.makeDue();
    t.is(await d.claim(), undefined, 'delivered: nothing to claim, even when due');
    t.is(r.received.length, 1);
  },
);

test('an attempt is not claimed before its time, and is claimed at it', async (t) => {
  const { db } = database();
  const { r, d } = await setUp(t);
  await failAttempts(d, r, 1);
  const scheduled = await d.state();
  t.like(scheduled, { status: 'failed', attempts: 1 });
  t.true(new Date(scheduled.next_attempt_at).getTime() - Date.now() > 290_000, 'five minutes ahead');
  t.is(await d.claim(), undefined, 'early: not claimed');
  t.is(r.received.length, 1);
  await db('webhook_deliveries')
    .where({ id: d.deliveryId })
    .update({ next_attempt_at: db.raw("now() + interval '300 milliseconds'") });
  await waitFor(async () => (await d.runDue()) !== undefined);
  t.is(r.received.length, 2);
  t.is(r.received[1]!.headers['x-delivery-attempt'], '2');
  t.is(
    r.received[1]!.headers['x-delivery-id'],
    scheduled.next_attempt_id,
    'the attempt named when it was scheduled',
  );
});

test.serial('a fifth attempt in flight is not dead-lettered, and its success counts', async (t) => {
  const { r, d } = await setUp(t);
  await failAttempts(d, r, MAX_ATTEMPTS - 1);
  await d.makeDue();
  const held = gate(r);
  const running = d.finish((await d.claim())!);
  await waitFor(() => r.received.length === MAX_ATTEMPTS);
  t.is(await d.claim(), undefined);
  t.deepEqual(await sweep(), []);
  t.like(await d.state(), { status: 'pending', attempts: MAX_ATTEMPTS });
  held.release(200);
  await running;
  t.like(await d.state(), { status: 'delivered', attempts: MAX_ATTEMPTS, last_status_code: 200 });
});

test.serial(
  'a crashed attempt is taken over exactly once, after its lease, and the delivery moves on',
  async (t) => {
    const { r, d } = await setUp(t);
    // A worker claims the attempt and dies before sending: the attempt is in flight with no one on it.
    const plan = (await d.claim())!;
    t.deepEqual(await sweep(), [], 'within the lease: left alone');
    await backdate(d, plan.attemptId, PAST_LEASE_SECONDS);
    const swept = await Promise.all([sweep(), sweep(), sweep()]);
    t.deepEqual(swept.flat(), ['failed'], 'taken over once');
    t.is(r.received.length, 0, 'a takeover sends nothing itself');
    const state = await d.state();
    t.like(state, { status: 'failed', attempts: 1, last_error: ABANDONED_ATTEMPT, last_status_code: null });
    t.truthy(state.next_attempt_id, 'the next attempt is named');
    t.true(new Date(state.next_attempt_at).getTime() - Date.now() > 290_000, 'after the first retry delay');
    const [abandoned] = await d.attempts();
    t.like(abandoned, { id: plan.attemptId, error: ABANDONED_ATTEMPT });
    t.truthy(abandoned.finished_at);
    await d.runScheduled();
    t.is(r.received.length, 1);
    t.is(r.received[0]!.headers['x-delivery-attempt'], '2');
    t.like(await d.state(), { status: 'delivered', attempts: 2 });
  },
);

test.serial('a crashed fifth attempt is dead-lettered once; a late success of it still counts', async (t) => {
  const { db } = database();
  const { r, d } = await setUp(t);
  await failAttempts(d, r, MAX_ATTEMPTS - 1);
  await d.makeDue();
  const fifth = (await d.claim())!;
  await backdate(d, fifth.attemptId, PAST_LEASE_SECONDS);
  t.deepEqual((await Promise.all([sweep(), sweep()])).flat(), ['dead_letter']);
  t.like(await d.state(), {
    status: 'dead_letter',
    attempts: MAX_ATTEMPTS,
    last_error: ABANDONED_ATTEMPT,
    next_attempt_id: null,
  });
  // The worker was slow, not dead: its attempt got a 2xx after all.
  const outcome = { ok: true, statusCode: 200, error: null };
  const recorded = await deliveries.settle(db, [
    { deliveryId: d.deliveryId, attemptId: fifth.attemptId, outcome, next: null },
  ]);
  t.true(recorded.has(fifth.attemptId));
  t.like(await d.state(), { status: 'delivered', last_status_code: 200 });
});

test('a stale outcome changes nothing: an attempt recorded twice, or one of an earlier round', async (t) => {
  const { db } = database();
  const { r, d } = await setUp(t);
  const done = await d.runDue();
  t.like(await d.state(), { status: 'delivered', attempts: 1 });
  const failed = { ok: false, statusCode: 500, error: 'late' };
  const again = await deliveries.settle(db, [{ ...done!.settled, outcome: failed, next: null }]);
  t.is(again.size, 0);
  t.like(await d.state(), { status: 'delivered', attempts: 1 });
  t.is(r.received.length, 1);
});

test('a redelivery counts attempts afresh, and nothing of the earlier round runs again', async (t) => {
  const { db } = database();
  const { r, d } = await setUp(t);
  await failAttempts(d, r, MAX_ATTEMPTS);
  t.like(await d.state(), { status: 'dead_letter' });
  const lastAttempt = (await d.state()).last_attempt_id as string;
  t.is(await d.claim(), undefined, 'a dead letter has nothing to claim');
  const res = await call(server(), 'POST', `/api/v1/partner/webhooks/deliveries/${lastAttempt}/redeliver`, {
    key: d.apiKey,
  });
  t.is(res.status, 202, res.text);
  const requeued = await d.state();
  t.like(requeued, { status: 'pending', attempts: 0 });
  r.respond = () => 200;
  await d.runDue();
  const sent = r.received.at(-1)!;
  t.is(sent.headers['x-delivery-attempt'], '1');
  t.is(sent.event!.delivery_id, requeued.next_attempt_id);
  t.is(sent.event!.event_id, d.event.id);
  t.like(await d.state(), { status: 'delivered', attempts: 1 });
  t.is(r.received.length, MAX_ATTEMPTS + 1);
  t.is(
    Number((await db('webhook_attempts').where({ delivery_id: d.deliveryId }).count({ n: '*' }))[0]!.n),
    6,
  );
});
