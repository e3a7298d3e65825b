/**
 * retention.prune deletes what is older than RETENTION_DAYS and nothing else: attempts, finished
 * deliveries, events no delivery still needs, idempotency keys; batch after batch; a second run
 * finds nothing. The schedule is in place after migrate.
 */
import test from 'ava';
import { randomUUID } from 'node:crypto';
import { RETENTION_CRON, RETENTION_PRUNE } from '../../db/jobs/kinds.ts';
import { pruneBatch } from '../../db/queries/retention.ts';
import { requeue } from '../../db/queries/webhook-deliveries.ts';
import { retentionPrune, RETENTION_BATCH } from '../../workers/retention-prune.ts';
import { makeBookingWorld } from '../helpers/booking.ts';
import { useTestDatabase } from '../helpers/database.ts';
import { publishedEvent } from '../helpers/events.ts';
import { useTestServer } from '../helpers/http.ts';
import { waitFor } from '../helpers/wait.ts';
import { subscribe } from '../helpers/webhooks.ts';

const database = useTestDatabase(test);
const server = useTestServer(test, database);

const DAY = 86_400_000;
const ago = (days: number) => new Date(Date.now() - days * DAY);

test.serial(
  'prunes what is older than RETENTION_DAYS, keeps what is younger or still needed; twice is harmless',
  async (t) => {
    const { db, boss, config, log } = database();
    t.is(config.retentionDays, 30);
    const w = await makeBookingWorld(db);
    await subscribe(server(), w.apiKey, 'http://127.0.0.1:9/hooks');
    const event = async (days: number, delivery?: { status: string; lastAttemptDays: number }) => {
      const id = await publishedEvent(db, w.partnerId, w.venueId);
      await db('events')
        .where({ id })
        .update({ occurred_at: ago(days) });
      const [d] = await db('webhook_deliveries').where({ event_id: id });
      if (delivery) {
        await db('webhook_deliveries')
          .where({ id: d.id })
          .update({
            status: delivery.status,
            created_at: ago(days),
            last_attempt_at: ago(delivery.lastAttemptDays),
            // A delivered or dead-lettered delivery names no next attempt; a pending one keeps its.
            ...(delivery.status === 'pending' ? {} : { next_attempt_id: null, next_attempt_at: null }),
          });
        await db('webhook_attempts').insert({
          id: randomUUID(),
          delivery_id: d.id,
          attempt: 1,
          started_at: ago(days),
        });
      } else {
        await db('webhook_deliveries').where({ id: d.id }).delete();
      }
      return id;
    };
    const gone = await event(40, { status: 'delivered', lastAttemptDays: 40 });
    const underWay = await event(40, { status: 'pending', lastAttemptDays: 40 });
    const recentlyRetried = await event(40, { status: 'dead_letter', lastAttemptDays: 10 });
    const young = await event(29, { status: 'delivered', lastAttemptDays: 29 });
    // More old events than one batch takes.
    await db.raw(
      `insert into events (event_type, venue_id, partner_id, slot_id, occurred_at)
     select 'hold_created', ?, ?, gen_random_uuid(), now() - interval '31 days' from generate_series(1, ?)`,
      [w.venueId, w.partnerId, RETENTION_BATCH * 2 + 17],
    );
    await db('idempotency_keys').insert([
      { partner_id: w.partnerId, key: 'old', operation: 'hold', fingerprint: 'x', created_at: ago(31) },
      { partner_id: w.partnerId, key: 'new', operation: 'hold', fingerprint: 'x', created_at: ago(1) },
    ]);

    const run = () => retentionPrune.handle({}, { db, boss, config, log }, { id: randomUUID() } as never);
    await run();
    const events = await db('events').where({ venue_id: w.venueId }).pluck('id');
    t.deepEqual(events.sort(), [underWay, recentlyRetried, young].sort());
    t.false(events.includes(gone));
    t.deepEqual(
      (
        await db('webhook_deliveries')
          .whereIn('event_id', [underWay, recentlyRetried, young])
          .pluck('event_id')
      ).sort(),
      [underWay, recentlyRetried, young].sort(),
    );
    const attempts = await db('webhook_attempts')
      .join('webhook_deliveries as d', 'd.id', 'webhook_attempts.delivery_id')
      .pluck('d.event_id');
    t.deepEqual(
      attempts,
      [young],
      'attempts older than the cutoff are gone, even of a delivery still under way',
    );
    t.deepEqual(await db('idempotency_keys').where({ partner_id: w.partnerId }).pluck('key'), ['new']);

    const before = await db('events').count({ n: '*' });
    await run();
    t.deepEqual(await db('events').count({ n: '*' }), before, 'a second run deletes nothing more');
  },
);

test.serial('migrate leaves the daily schedule of retention.prune', async (t) => {
  const { rows } = await database().db.raw(
    'select name, cron, timezone from pgboss.schedule where name = ?',
    [RETENTION_PRUNE.name],
  );
  t.deepEqual(rows, [{ name: 'retention.prune', cron: RETENTION_CRON, timezone: 'UTC' }]);
});

test.serial(
  'a dead letter redelivered while retention waits for its row is kept, with its event',
  async (t) => {
    const { db } = database();
    const w = await makeBookingWorld(db);
    await subscribe(server(), w.apiKey, 'http://127.0.0.1:9/hooks');
    const eventId = await publishedEvent(db, w.partnerId, w.venueId);
    await db('events')
      .where({ id: eventId })
      .update({ occurred_at: ago(40) });
    const [delivery] = await db('webhook_deliveries').where({ event_id: eventId }).pluck('id');
    await db('webhook_deliveries')
      .where({ id: delivery })
      .update({
        status: 'dead_letter',
        created_at: ago(40),
        last_attempt_at: ago(40),
        next_attempt_id: null,
      });
    // A redelivery holds the row (as the API's, in its transaction) when retention comes for it.
    const redelivery = await db.transaction();
    await requeue(redelivery, delivery as string);
    const pruned = pruneBatch(db, ago(30), RETENTION_BATCH);
    await waitFor(async () => {
      const { rows } = await db.raw<{ rows: unknown[] }>(
        "select 1 from pg_stat_activity where wait_event_type = 'Lock' and query like 'delete from webhook_deliveries%'",
      );
      return rows.length > 0;
    });
    await redelivery.commit();
    const deleted = await pruned;
    t.is(deleted.webhook_deliveries, 0);
    t.is(deleted.events, 0);
    t.like(await db('webhook_deliveries').where({ id: delivery }).first(), {
      status: 'pending',
      attempts: 0,
    });
    t.truthy(await db('events').where({ id: eventId }).first());
  },
);
