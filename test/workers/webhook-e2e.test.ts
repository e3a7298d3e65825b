/**
 * Webhooks end to end: real API calls, real workers through pg-boss, a real local receiver that
 * verifies every delivery with the exported partner-side function. Also: two workers send each
 * attempt once; a dead endpoint of one partner does not delay another's; a worker killed mid-
 * delivery loses nothing.
 */
import test, { type ExecutionContext } from 'ava';
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as grants from '../../db/queries/venue-grants.ts';
import { startWorkers, type Workers } from '../../workers/main.ts';
import { ABANDONED_ATTEMPT } from '../../db/rules/webhook-attempts.ts';
import {
  bookSlot,
  gridSlots,
  holdSlot,
  makeBookingWorld,
  makeOverdue,
  releaseHold,
} from '../helpers/booking.ts';
import { testConfig, useTestDatabase } from '../helpers/database.ts';
import { makePartner } from '../helpers/factories.ts';
import { call, useTestServer } from '../helpers/http.ts';
import { waitFor } from '../helpers/wait.ts';
import { startReceiver, subscribe, type Receiver } from '../helpers/webhooks.ts';

const database = useTestDatabase(test);
const server = useTestServer(test, database);
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
/** In-process workers for one test, stopped when it ends (t.teardown). */
async function workers(t: ExecutionContext, overrides: Record<string, string> = {}): Promise<Workers> {
  const { url, log } = database();
  const started = await startWorkers(testConfig({ DATABASE_URL: url, ...overrides }), url, log);
  t.teardown(() => started.stop());
  return started;
}

/** A receiver for one test, closed when it ends. */
async function receiver(t: ExecutionContext, secret: () => string): Promise<Receiver> {
  const r = await startReceiver(secret);
  t.teardown(() => r.close());
  return r;
}

const post = (path: string, key: string, body: Record<string, unknown>) =>
  call(server(), 'POST', `/api/v1${path}`, { key, body: { idempotency_key: randomUUID(), ...body } });

test.serial(
  'all six event types reach a subscriber, signed, including changes made by another partner',
  async (t) => {
    const { db } = database();
    await workers(t);
    const w = await makeBookingWorld(db);
    const watcher = await makePartner(db);
    await grants.grant(db, watcher.partnerId, w.venueId);
    let secret = '';
    const r = await receiver(t, () => secret);
    ({ secret } = await subscribe(server(), watcher.apiKey, r.url));

    await releaseHold(server(), w, (await holdSlot(server(), w, { index: 0 })).holdId);
    const stale = await holdSlot(server(), w, { index: 1 });
    await makeOverdue(db, stale.holdId);
    await holdSlot(server(), w, { index: 1 }); // expires the stale hold on its way
    const booked = await bookSlot(server(), w, { index: 2 });
    await post(`/bookings/${booked.bookingId}/cancel`, w.apiKey, {});
    await post(`/bookings/${booked.bookingId}/refund`, w.apiKey, {});

    const expected = [
      'hold_created',
      'hold_cancelled',
      'hold_expired',
      'booking_created',
      'booking_cancelled',
      'booking_refunded',
    ];
    await waitFor(() => expected.every((type) => r.received.some((x) => x.event?.event_type === type)), {
      timeout: 20_000,
    });
    t.true(
      r.received.every((x) => x.rejection === undefined),
      'every signature verifies',
    );
    for (const x of r.received) {
      t.is(x.event!.partner_id, w.partnerId, 'the originating partner, not the receiver');
      t.is(x.headers['x-webhook-event'], x.event!.event_type);
      t.is(x.headers['x-delivery-id'], x.event!.delivery_id);
    }
    const refunded = r.received.find((x) => x.event?.event_type === 'booking_refunded')!.event!;
    t.is(refunded.booking_id, booked.bookingId);
    t.is(refunded.hold_id, booked.holdId);
    await waitFor(
      async () =>
        (await call(server(), 'GET', '/api/v1/partner/observability', { key: watcher.apiKey })).body
          .deliveries.delivered >= 7,
    );
  },
);

test.serial('two workers: every attempt is sent once, not once per worker', async (t) => {
  const { db } = database();
  await workers(t);
  await workers(t);
  const w = await makeBookingWorld(db);
  let secret = '';
  const r = await receiver(t, () => secret);
  ({ secret } = await subscribe(server(), w.apiKey, r.url, ['hold_created']));
  const slots = await gridSlots(db, w.venueId, w.court, 2);
  await Promise.all(slots.map((_, index) => holdSlot(server(), w, { index, daysAhead: 2 })));
  await waitFor(() => r.received.length >= slots.length, { timeout: 20_000 });
  await new Promise((resolve) => setTimeout(resolve, 500)); // room for a duplicate to show up
  const eventIds = r.received.map((x) => x.event!.event_id);
  t.is(eventIds.length, slots.length);
  t.is(new Set(eventIds).size, slots.length, 'each event once');
  t.is(new Set(r.received.map((x) => x.event!.delivery_id)).size, slots.length, 'each attempt once');
});

test.serial('a dead endpoint of one partner does not delay deliveries to another', async (t) => {
  const { db } = database();
  await workers(t, { WEBHOOK_TIMEOUT_MS: '4000' });
  const w = await makeBookingWorld(db);
  const other = await makePartner(db);
  await grants.grant(db, other.partnerId, w.venueId);
  const dead = await receiver(t, () => '');
  dead.respond = () => undefined; // never answers
  let secret = '';
  const fast = await receiver(t, () => secret);
  await subscribe(server(), w.apiKey, dead.url, ['hold_created']);
  ({ secret } = await subscribe(server(), other.apiKey, fast.url, ['hold_created']));
  const started = Date.now();
  for (let index = 0; index < 6; index++) await holdSlot(server(), w, { index, daysAhead: 3 });
  await waitFor(() => fast.received.length >= 6, { timeout: 3000 });
  t.true(Date.now() - started < 3000, 'all delivered to the live endpoint while the dead one hangs');
  t.true(dead.received.length >= 1, 'the dead endpoint was tried');
});

test.serial(
  'a worker killed mid-delivery: the event still arrives, with the same event_id, and no job stays stuck',
  async (t) => {
    const { db, url } = database();
    const w = await makeBookingWorld(db);
    let secret = '';
    const r = await receiver(t, () => secret);
    r.respond = () => (r.received.length === 1 ? undefined : 200); // the first attempt hangs
    ({ secret } = await subscribe(server(), w.apiKey, r.url, ['hold_created']));
    // The cut attempt counts as failed, so the next one waits its retry delay: a short one here.
    const env = {
      ...process.env,
      DATABASE_URL: url,
      WEBHOOK_TIMEOUT_MS: '2000',
      WEBHOOK_RETRY_DELAYS: '1,1,1,1',
      LOG_LEVEL: 'warn',
    };
    const first = spawn(process.execPath, ['workers/main.ts'], { cwd: root, env, stdio: 'ignore' });
    const held = await holdSlot(server(), w, { daysAhead: 4 });
    await waitFor(() => r.received.length === 1, { timeout: 15_000 });
    first.kill('SIGKILL');
    await once(first, 'exit');

    const second = spawn(process.execPath, ['workers/main.ts'], { cwd: root, env, stdio: 'ignore' });
    t.teardown(async () => {
      second.kill('SIGTERM');
      if (second.exitCode === null) await once(second, 'exit');
    });
    // The killed attempt's job expires (timeout + 5 s) and pg-boss hands it to the live worker,
    // which finds the attempt's lease passed, records it as abandoned and schedules the next.
    await waitFor(() => r.received.length >= 2, { timeout: 45_000, interval: 250 });
    const [cut, retried] = r.received as [(typeof r.received)[0], (typeof r.received)[0]];
    t.is(cut.event!.event_id, retried.event!.event_id);
    t.not(cut.event!.delivery_id, retried.event!.delivery_id);
    t.is(cut.event!.hold_id, held.holdId);
    await waitFor(
      async () =>
        (await db('webhook_deliveries').where({ event_id: cut.event!.event_id }).first())?.status ===
        'delivered',
    );
    const delivery = await db('webhook_deliveries').where({ event_id: cut.event!.event_id }).first();
    const active = await db.raw(
      "select count(*)::int as n from pgboss.job where name = 'webhook.deliver' and state = 'active' and data->>'delivery_id' = ?",
      [delivery.id],
    );
    t.is(active.rows[0].n, 0, 'no job of this delivery is left active');
    t.is(delivery.attempts, 2);
    const [abandoned] = await db('webhook_attempts').where({ delivery_id: delivery.id }).orderBy('attempt');
    t.like(abandoned, { id: cut.event!.delivery_id, error: ABANDONED_ATTEMPT });
    t.is(retried.headers['x-delivery-attempt'], '2');
  },
);
