/**
 * Attempt identity under pg-boss's at-least-once delivery: every job names the attempt it is for,
 * and runs that attempt at most once, never early; a duplicate finding its attempt in flight
 * neither sends nor completes, and takes over only once the attempt's lease has passed. Jobs are
 * run by hand (duplicates, early, late and stale ones are what pg-boss can hand a worker), against
 * real local receivers.
 */
import test, { type ExecutionContext } from 'ava';
import { RetryLaterError } from '../../workers/job-handler.ts';
import * as deliveries from '../../db/queries/webhook-deliveries.ts';
import { ABANDONED_ATTEMPT, MAX_ATTEMPTS } from '../../workers/webhook-deliver.ts';
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

/** webhook.deliver jobs queued for a delivery, oldest first. */
async function jobsOf(d: Delivery): Promise<{ attempt_id: string | null; start_after: Date }[]> {
  const { rows } = await database().db.raw(
    `select data->>'attempt_id' as attempt_id, start_after from pgboss.job
      where name = 'webhook.deliver' and data->>'delivery_id' = ? order by created_on`,
    [d.deliveryId],
  );
  return rows;
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

test('a delivery job run twice at once sends once', async (t) => {
  const { r, d } = await setUp(t);
  r.respond = () => new Promise((resolve) => setTimeout(() => resolve(200), 100));
  const payload = await d.scheduled();
  const results = await Promise.allSettled([d.runJob(payload), d.runJob(payload)]);
  t.is(r.received.length, 1, 'one request');
  t.like(await d.state(), { status: 'delivered', attempts: 1 });
  for (const result of results)
    if (result.status === 'rejected') t.true(result.reason instanceof RetryLaterError, String(result.reason));
});

test('a job whose attempt is in flight elsewhere neither sends nor completes', async (t) => {
  const { r, d } = await setUp(t);
  const held = gate(r);
  const payload = await d.scheduled();
  const first = d.runJob(payload);
  await waitFor(() => r.received.length === 1);
  await t.throwsAsync(
    d.runJob(payload),
    { instanceOf: RetryLaterError },
    'fails, so pg-boss retries it later',
  );
  await t.throwsAsync(
    d.runJob({ delivery_id: d.deliveryId }),
    { instanceOf: RetryLaterError },
    'legacy job too',
  );
  t.is(r.received.length, 1, 'sent nothing');
  held.release(200);
  await first;
  t.like(await d.state(), { status: 'delivered', attempts: 1 });
  await d.runJob(payload); // its retry, after the attempt finished, completes and sends nothing
  t.is(r.received.length, 1);
});

test('a job run after its attempt finished does nothing', async (t) => {
  const { r, d } = await setUp(t);
  const first = await d.scheduled();
  await failAttempts(d, r, 1);
  const before = await d.state();
  t.like(before, { status: 'failed', attempts: 1 });
  await d.makeDue(); // even once the next attempt is due, the finished attempt's job runs nothing
  await d.runJob(first);
  await d.runJob({ delivery_id: d.deliveryId }); // nor does a job without an attempt id
  t.is(r.received.length, 1);
  t.like(await d.state(), { status: 'failed', attempts: 1, next_attempt_id: before.next_attempt_id });
});

test('an early job does not send; its attempt is queued again for its time', async (t) => {
  const { db } = database();
  const { r, d } = await setUp(t);
  await failAttempts(d, r, 1);
  const second = await d.scheduled();
  await d.runJob(second);
  t.is(r.received.length, 1, 'the second attempt was not sent');
  t.like(await d.state(), { status: 'failed', attempts: 1, next_attempt_id: second.attempt_id });
  const { rows } = await db.raw(
    `select j.start_after >= d.next_attempt_at as not_early,
            j.start_after < d.next_attempt_at + interval '2 milliseconds' as on_time
       from pgboss.job j join webhook_deliveries d on d.id = (j.data->>'delivery_id')::uuid
      where j.name = 'webhook.deliver' and j.data->>'attempt_id' = ?`,
    [second.attempt_id!],
  );
  t.deepEqual(
    rows,
    [
      { not_early: true, on_time: true },
      { not_early: true, on_time: true },
    ],
    'the job queued with the failure, and the early job queued again, both for the attempt’s time',
  );
  await d.runScheduled();
  t.is(r.received.length, 2);
  t.is(r.received[1]!.headers['x-delivery-attempt'], '2');
});

test('a fifth attempt in flight is not dead-lettered by a duplicate, and its success counts', async (t) => {
  const { r, d } = await setUp(t);
  await failAttempts(d, r, MAX_ATTEMPTS - 1);
  await d.makeDue();
  const fifth = await d.scheduled();
  const held = gate(r);
  const running = d.runJob(fifth);
  await waitFor(() => r.received.length === MAX_ATTEMPTS);
  await t.throwsAsync(d.runJob(fifth), { instanceOf: RetryLaterError });
  await t.throwsAsync(d.runJob({ delivery_id: d.deliveryId }), { instanceOf: RetryLaterError });
  t.like(await d.state(), { status: 'pending', attempts: MAX_ATTEMPTS });
  held.release(200);
  await running;
  t.like(await d.state(), { status: 'delivered', attempts: MAX_ATTEMPTS, last_status_code: 200 });
});

test('a crashed attempt is taken over exactly once, after its lease, and the delivery moves on', async (t) => {
  const { db } = database();
  const { r, d } = await setUp(t);
  const first = await d.scheduled();
  // A worker claims the attempt and dies before sending: the attempt is in flight with no one on it.
  const plan = await deliveries.claimAttempt(db, d.deliveryId, first.attempt_id, MAX_ATTEMPTS);
  t.is(plan?.attemptId, first.attempt_id);
  await t.throwsAsync(d.runJob(first), { instanceOf: RetryLaterError }, 'within the lease: retry later');
  await backdate(d, first.attempt_id!, PAST_LEASE_SECONDS);
  await Promise.all([d.runJob(first), d.runJob(first), d.runJob({ delivery_id: d.deliveryId })]);
  t.is(r.received.length, 0, 'a takeover sends nothing itself');
  const state = await d.state();
  t.like(state, { status: 'failed', attempts: 1, last_error: ABANDONED_ATTEMPT, last_status_code: null });
  const [abandoned] = await d.attempts();
  t.like(abandoned, { id: first.attempt_id, error: ABANDONED_ATTEMPT });
  t.truthy(abandoned.finished_at);
  const next = (await jobsOf(d)).filter((j) => j.attempt_id === state.next_attempt_id);
  t.is(next.length, 1, 'the next attempt queued once');
  t.deepEqual(next[0]!.start_after, state.next_attempt_at);
  await d.runScheduled();
  t.is(r.received.length, 1);
  t.is(r.received[0]!.headers['x-delivery-attempt'], '2');
  t.like(await d.state(), { status: 'delivered', attempts: 2 });
});

test('a crashed fifth attempt is dead-lettered once; a late success of it still counts', async (t) => {
  const { db } = database();
  const { r, d } = await setUp(t);
  await failAttempts(d, r, MAX_ATTEMPTS - 1);
  await d.makeDue();
  const fifth = await d.scheduled();
  await deliveries.claimAttempt(db, d.deliveryId, fifth.attempt_id, MAX_ATTEMPTS);
  await backdate(d, fifth.attempt_id!, PAST_LEASE_SECONDS);
  await Promise.all([d.runJob(fifth), d.runJob(fifth)]);
  t.like(await d.state(), { status: 'dead_letter', attempts: MAX_ATTEMPTS, last_error: ABANDONED_ATTEMPT });
  t.is((await jobsOf(d)).length, MAX_ATTEMPTS, 'nothing queued after the dead letter');
  // The worker was slow, not dead: its attempt got a 2xx after all.
  const outcome = { ok: true, statusCode: 200, error: null };
  const attemptId = fifth.attempt_id!;
  t.true(
    await db.transaction((trx) =>
      deliveries.finishAttempt(trx, { deliveryId: d.deliveryId, attemptId, outcome, next: null }),
    ),
  );
  t.like(await d.state(), { status: 'delivered', last_status_code: 200 });
});

test('a redelivery counts attempts afresh, and no job of the earlier round can run one of it', async (t) => {
  const { db } = database();
  const { r, d } = await setUp(t);
  await failAttempts(d, r, MAX_ATTEMPTS);
  const oldRound = await jobsOf(d);
  t.like(await d.state(), { status: 'dead_letter' });
  const lastAttempt = (await d.state()).last_attempt_id as string;
  const res = await call(server(), 'POST', `/api/v1/partner/webhooks/deliveries/${lastAttempt}/redeliver`, {
    key: d.apiKey,
  });
  t.is(res.status, 202, res.text);
  for (const job of oldRound) await d.runJob({ delivery_id: d.deliveryId, attempt_id: job.attempt_id! });
  await d.runJob({ delivery_id: d.deliveryId });
  t.is(r.received.length, MAX_ATTEMPTS, 'no stale job sent anything');
  t.like(await d.state(), { status: 'pending', attempts: 0 });
  const fresh = (await jobsOf(d)).filter((j) => !oldRound.some((o) => o.attempt_id === j.attempt_id));
  t.is(fresh.length, 1);
  r.respond = () => 200;
  await d.runJob({ delivery_id: d.deliveryId, attempt_id: fresh[0]!.attempt_id! });
  const sent = r.received.at(-1)!;
  t.is(sent.headers['x-delivery-attempt'], '1');
  t.is(sent.event!.delivery_id, fresh[0]!.attempt_id!);
  t.is(sent.event!.event_id, d.event.id);
  t.like(await d.state(), { status: 'delivered', attempts: 1 });
  t.is(
    Number((await db('webhook_attempts').where({ delivery_id: d.deliveryId }).count({ n: '*' }))[0]!.n),
    6,
  );
});

test('jobs queued before attempts had ids still deliver, and the next attempt gets one', async (t) => {
  const { db } = database();
  const { r, d } = await setUp(t);
  // A delivery fanned out by the previous release: nothing named, the job carries only delivery_id.
  await db('webhook_deliveries')
    .where({ id: d.deliveryId })
    .update({ next_attempt_id: null, next_attempt_at: null });
  await failAttempts(d, r, 0);
  r.respond = () => 503;
  await d.runJob({ delivery_id: d.deliveryId });
  t.is(r.received.length, 1);
  const state = await d.state();
  t.like(state, { status: 'failed', attempts: 1 });
  t.truthy(state.next_attempt_id, 'the retry is named');
  await d.makeDue();
  await d.runJob({ delivery_id: d.deliveryId }); // the old job's duplicate cannot run a named attempt
  t.is(r.received.length, 1);
  r.respond = () => 200;
  await d.runScheduled();
  t.like(await d.state(), { status: 'delivered', attempts: 2 });
});
