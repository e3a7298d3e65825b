/**
 * The retry schedule under a slow endpoint, with real workers (their dispatcher): one partner's host
 * resolves only after three timeouts (to a receiver that would answer 200, so an attempt whose DNS
 * escaped the deadline would succeed), beside healthy partners. Asserted from the database's own
 * timestamps, never from wall-clock durations.
 */
import test, { type ExecutionContext } from 'ava';
import * as grants from '../../db/queries/venue-grants.ts';
import { MAX_ATTEMPTS } from '../../db/rules/webhook-attempts.ts';
import { startWorkers } from '../../workers/main.ts';
import { holdSlot, makeBookingWorld } from '../helpers/booking.ts';
import { testConfig, useTestDatabase } from '../helpers/database.ts';
import { makePartner } from '../helpers/factories.ts';
import { useTestServer } from '../helpers/http.ts';
import { waitFor } from '../helpers/wait.ts';
import { notFound, startReceiver, subscribe, testResolver, type Receiver } from '../helpers/webhooks.ts';

const database = useTestDatabase(test);
const server = useTestServer(test, database);

const TIMEOUT_MS = 300;
/** Seconds before attempts 2 to 5. */
const DELAY_SECONDS = 1;

interface AttemptRow {
  delivery_id: string;
  attempt: number;
  status_code: number | null;
  error: string | null;
  started_at: Date;
  finished_at: Date | null;
}

test('a slowly resolving endpoint: its attempts run once each, on time, within the timeout; others flow', async (t) => {
  const { db, url, log } = database();
  const receivers: Receiver[] = [];
  const receiver = async () => {
    const r = await startReceiver(() => '');
    receivers.push(r);
    return r;
  };
  t.teardown(() => Promise.all(receivers.map((r) => r.close())));
  const slowR = await receiver();
  const okR = await receiver();
  const flakyR = await receiver();
  flakyR.respond = () => (flakyR.received.length === 1 ? 503 : 200);
  const dns = testResolver((host) =>
    host === 'slow.example.test'
      ? { address: '127.0.0.1', afterMs: 3 * TIMEOUT_MS }
      : host.endsWith('.example.test')
        ? '127.0.0.1'
        : notFound(host),
  );
  const config = testConfig({
    DATABASE_URL: url,
    WEBHOOK_TIMEOUT_MS: String(TIMEOUT_MS),
    WEBHOOK_RETRY_DELAYS: Array(4).fill(DELAY_SECONDS).join(','),
  });
  const workers = await startWorkers(config, url, log, { lookup: dns.lookup });
  t.teardown(() => workers.stop());

  const w = await makeBookingWorld(db);
  const subscriber = async (r: Receiver, host: string) => {
    const p = await makePartner(db);
    await grants.grant(db, p.partnerId, w.venueId);
    return (await subscribe(server(), p.apiKey, `http://${host}:${r.port}/hooks`, ['hold_created'])).id;
  };
  const slow = await subscriber(slowR, 'slow.example.test');
  const ok = await subscriber(okR, 'ok.example.test');
  const flaky = await subscriber(flakyR, 'flaky.example.test');
  await holdSlot(server(), w);

  const status = async (subscription: string) =>
    (await db('webhook_deliveries').where({ subscription_id: subscription }).first())?.status;
  await waitFor(async () => (await status(slow)) === 'dead_letter' && (await status(flaky)) === 'delivered', {
    timeout: 20_000,
    interval: 100,
  });
  const attempts = async (subscription: string): Promise<AttemptRow[]> =>
    db('webhook_attempts as a')
      .join('webhook_deliveries as d', 'd.id', 'a.delivery_id')
      .where('d.subscription_id', subscription)
      .orderBy('a.attempt')
      .select('a.*');

  // The slow endpoint: five attempts, numbered 1 to 5 once each, none before its time, each cut
  // off by the deadline while its name was still resolving, then the dead letter.
  const slowAttempts = await attempts(slow);
  t.deepEqual(
    slowAttempts.map((a) => a.attempt),
    Array.from({ length: MAX_ATTEMPTS }, (_, i) => i + 1),
  );
  for (const a of slowAttempts) t.is(a.error, `no answer within ${TIMEOUT_MS} ms`, `attempt ${a.attempt}`);
  assertOnSchedule(t, slowAttempts);
  t.is(slowR.received.length, 0, 'no attempt outlived its deadline to reach the endpoint');

  // The healthy endpoints: delivered at once, and before the slow endpoint's first attempt gave up.
  const [okFirst] = await attempts(ok);
  const flakyAttempts = await attempts(flaky);
  t.like(okFirst, { attempt: 1, status_code: 200 });
  t.true(okFirst!.finished_at! < slowAttempts[0]!.finished_at!, 'not held up by the slow endpoint');
  t.true(flakyAttempts[0]!.finished_at! < slowAttempts[0]!.finished_at!);
  t.deepEqual(
    flakyAttempts.map((a) => [a.attempt, a.status_code]),
    [
      [1, 503],
      [2, 200],
    ],
  );
  assertOnSchedule(t, flakyAttempts);
  t.deepEqual(
    flakyR.received.map((x) => x.headers['x-delivery-attempt']),
    ['1', '2'],
  );
  t.is(okR.received.length, 1);
});

/**
 * Each attempt n > 1 started no earlier than the next_attempt_at recorded when attempt n - 1
 * failed, which is that attempt's finished_at plus the delay: both come from the one `now()` of
 * the transaction that recorded the failure.
 */
function assertOnSchedule(t: ExecutionContext, rows: AttemptRow[]) {
  for (let i = 1; i < rows.length; i++) {
    const due = rows[i - 1]!.finished_at!.getTime() + DELAY_SECONDS * 1000;
    t.true(rows[i]!.started_at.getTime() >= due, `attempt ${rows[i]!.attempt} started on or after its time`);
  }
}
