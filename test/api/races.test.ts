/**
 * The invariants, proven by racing for real: parallel requests through two apps with two pools
 * (two web processes), on one database.
 */
import test from 'ava';
import type { HoldRow } from '../../db/queries/holds.ts';
import { randomUUID } from 'node:crypto';
import { createHold } from '../../api/use-cases/create-hold.ts';
import { createDb } from '../../db/postgres/knex.ts';
import { installSendFunctions } from '../../db/jobs/sql-send.ts';
import * as grants from '../../db/queries/venue-grants.ts';
import {
  bookSlot,
  confirm,
  gridSlots,
  hold,
  holdSlot,
  localDate,
  makeBookingWorld,
} from '../helpers/booking.ts';
import { useTestDatabase } from '../helpers/database.ts';
import { makePackage, makePartner } from '../helpers/factories.ts';
import { purchase } from '../helpers/packages.ts';
import { join } from '../helpers/waitlist.ts';
import { startApp, type TestServer } from '../helpers/http.ts';
import { waitFor } from '../helpers/wait.ts';

const database = useTestDatabase(test);
const servers: TestServer[] = [];
let secondPool: ReturnType<typeof createDb> | undefined;
test.before(async () => {
  const db = await database.ready();
  secondPool = createDb(db.url, { poolMax: 10 });
  servers.push(await startApp(db), await startApp(db, { db: secondPool }));
});
test.after.always(async () => {
  for (const s of servers) await s.close();
  await secondPool?.destroy();
});
const web = (i: number) => servers[i % 2]!;

async function partnersOf(venueId: string, count: number) {
  const { db } = database();
  const keys: string[] = [];
  for (let i = 0; i < count; i++) {
    const p = await makePartner(db, { rateLimit: 100_000 });
    await grants.grant(db, p.partnerId, venueId);
    keys.push(p.apiKey);
  }
  return keys;
}

const count = (statuses: number[], status: number) => statuses.filter((s) => s === status).length;

test('50 parallel holds on one slot from 50 partners: exactly one 201, the rest 409, no 500', async (t) => {
  const { db } = database();
  const w = await makeBookingWorld(db);
  const [slot] = await gridSlots(db, w.venueId, w.court);
  const keys = await partnersOf(w.venueId, 50);
  const results = await Promise.all(
    keys.map((key, i) =>
      hold(web(i), key, { venue_id: w.venueId, resource_id: w.court, slot_start: slot!.slot_start }),
    ),
  );
  const statuses = results.map((r) => r.status);
  t.is(count(statuses, 201), 1, statuses.join(','));
  t.is(count(statuses, 409), 49);
  t.true(results.filter((r) => r.status === 409).every((r) => r.body.error === 'SLOT_NOT_AVAILABLE'));
  t.is(
    Number((await db('reservations').where({ active: true, unit_id: w.court }).count({ n: '*' }))[0]!.n),
    1,
  );
});

test('parallel holds on a whole and its parts: the winners never overlap, losers get the right 409', async (t) => {
  const { db } = database();
  const w = await makeBookingWorld(db);
  const [slot] = await gridSlots(db, w.venueId, w.full);
  const keys = await partnersOf(w.venueId, 45);
  const resources = [w.full, w.halfA, w.halfB];
  const results = await Promise.all(
    keys.map((key, i) =>
      hold(web(i), key, {
        venue_id: w.venueId,
        resource_id: resources[i % 3]!,
        slot_start: slot!.slot_start,
      }),
    ),
  );
  t.false(results.some((r) => r.status >= 500));
  const won = results.map((r, i) => (r.status === 201 ? resources[i % 3] : undefined)).filter(Boolean);
  // Either the whole pitch won alone, or each half was won once.
  t.true(
    (won.length === 1 && won[0] === w.full) ||
      (won.length === 2 && won.includes(w.halfA) && won.includes(w.halfB)),
    `winners: ${won.join(',')}`,
  );
  for (const r of results.filter((x) => x.status !== 201)) {
    t.is(r.status, 409);
    t.true(['SLOT_NOT_AVAILABLE', 'TRANSFORMATION_CONFLICT'].includes(r.body.error));
  }
  const units = await db('reservations')
    .where({ active: true })
    .whereIn('unit_id', [w.halfA, w.halfB])
    .pluck('unit_id');
  t.deepEqual([...units].sort(), [w.halfA, w.halfB].sort(), 'each half reserved exactly once');
});

test('20 parallel confirms with one key: one booking, every answer the same', async (t) => {
  const { db } = database();
  const w = await makeBookingWorld(db);
  const { holdId } = await holdSlot(web(0), w);
  const key = randomUUID();
  const results = await Promise.all(
    Array.from({ length: 20 }, (_, i) =>
      confirm(web(i), w.apiKey, { hold_id: holdId, idempotency_key: key }),
    ),
  );
  t.deepEqual([...new Set(results.map((r) => r.status))], [201]);
  t.is(new Set(results.map((r) => JSON.stringify(r.body))).size, 1);
  t.is(Number((await db('bookings').where({ hold_id: holdId }).count({ n: '*' }))[0]!.n), 1);
  t.is(
    Number(
      (await db('events').where({ hold_id: holdId, event_type: 'booking_created' }).count({ n: '*' }))[0]!.n,
    ),
    1,
  );
});

test('20 parallel confirms with different keys: one 201, the rest 409 INVALID_HOLD_STATE', async (t) => {
  const { db } = database();
  const w = await makeBookingWorld(db);
  const h = await holdSlot(web(0), w, { index: 1 });
  const results = await Promise.all(
    Array.from({ length: 20 }, (_, i) => confirm(web(i), w.apiKey, { hold_id: h.holdId })),
  );
  const statuses = results.map((r) => r.status);
  t.is(count(statuses, 201), 1);
  t.is(count(statuses, 409), 19);
  t.true(results.filter((r) => r.status === 409).every((r) => r.body.error === 'INVALID_HOLD_STATE'));
});

test('parallel holds with one idempotency key create one hold and all answer it', async (t) => {
  const { db } = database();
  const w = await makeBookingWorld(db);
  const [, , slot] = await gridSlots(db, w.venueId, w.court);
  const key = randomUUID();
  const results = await Promise.all(
    Array.from({ length: 20 }, (_, i) =>
      hold(web(i), w.apiKey, {
        venue_id: w.venueId,
        resource_id: w.court,
        slot_start: slot!.slot_start,
        idempotency_key: key,
      }),
    ),
  );
  t.deepEqual([...new Set(results.map((r) => r.status))], [201]);
  t.is(new Set(results.map((r) => r.body.hold_id)).size, 1);
  t.is(Number((await db('holds').where({ partner_id: w.partnerId }).count({ n: '*' }))[0]!.n), 1);
});

test('a retried write replays after a restart of the web process (a new app on a new pool)', async (t) => {
  const first = database();
  const w = await makeBookingWorld(first.db);
  const holdKey = randomUUID();
  const confirmKey = randomUUID();
  const b = await bookSlot(web(0), w, {
    index: 3,
    body: { idempotency_key: holdKey },
    confirm: { idempotency_key: confirmKey },
  });

  const pool = createDb(first.url, { poolMax: 2 });
  const restarted = await startApp(first, { db: pool });
  try {
    const h2 = await hold(restarted, w.apiKey, {
      venue_id: w.venueId,
      resource_id: w.court,
      slot_start: b.slotStart,
      idempotency_key: holdKey,
    });
    const c2 = await confirm(restarted, w.apiKey, { hold_id: b.holdId, idempotency_key: confirmKey });
    t.is(h2.status, 201);
    t.deepEqual(h2.body, b.hold.body);
    t.is(c2.status, 201);
    t.deepEqual(c2.body, b.confirm.body);
    t.is(c2.text, b.confirm.text, 'byte for byte');
  } finally {
    await restarted.close();
    await pool.destroy();
  }
});

test('every committed state change has exactly one event; a refused or rolled-back one has none', async (t) => {
  const { db } = database();
  const w = await makeBookingWorld(db);
  const h = await holdSlot(web(0), w, { index: 6 });
  await hold(web(1), w.apiKey, { venue_id: w.venueId, resource_id: w.court, slot_start: h.slotStart }); // 409
  await confirm(web(0), w.apiKey, { hold_id: h.holdId, customer_phone: 'bad' }); // 400
  const c = await confirm(web(1), w.apiKey, { hold_id: h.holdId });
  await confirm(web(0), w.apiKey, { hold_id: h.holdId }); // 409 INVALID_HOLD_STATE
  await db('holds').where({ id: h.holdId }).update({ status: 'CONFIRMED' }); // no-op update, no event
  const key = randomUUID();
  await Promise.all([0, 1, 2, 3].map((i) => call4(i, c.body.booking_id, key)));
  const types = await db('events').where({ hold_id: h.holdId }).orderBy('occurred_at').pluck('event_type');
  t.deepEqual(types, ['hold_created', 'booking_created', 'booking_cancelled']);

  function call4(i: number, bookingId: string, idempotencyKey: string) {
    return fetch(`${web(i).url}/api/v1/bookings/${bookingId}/cancel`, {
      method: 'POST',
      headers: { 'x-api-key': w.apiKey, 'content-type': 'application/json' },
      body: JSON.stringify({ idempotency_key: idempotencyKey }),
    });
  }
});

// Serial: it breaks the database's job sending for a moment, which other tests share.
test.serial(
  'a hold whose statement fails at its last step leaves no hold, reservation, event or spent key',
  async (t) => {
    const { db, boss } = database();
    const w = await makeBookingWorld(db);
    const [, , , , , , , slot] = await gridSlots(db, w.venueId, w.court);
    const key = randomUUID();
    const input = {
      venue_id: w.venueId,
      resource_id: w.court,
      slot_start: slot!.slot_start,
      slot_duration_minutes: 60,
      idempotency_key: key,
    };
    // The expiry job is the last write of the statement; a queue that refuses it rolls back all.
    await db.raw(`create or replace function send_job_hold_expire(
    p_data jsonb, p_start_after timestamptz default null, p_expire_seconds integer default null)
    returns setof uuid language plpgsql as $$ begin raise exception 'queue unavailable'; end $$`);
    try {
      await t.throwsAsync(() => createHold({ db, boss }, w.partnerId, input), {
        message: /queue unavailable/,
      });
    } finally {
      await installSendFunctions(db);
    }
    t.is(Number((await db('holds').where({ partner_id: w.partnerId }).count({ n: '*' }))[0]!.n), 0);
    t.is(
      Number((await db('reservations').where({ unit_id: w.court, active: true }).count({ n: '*' }))[0]!.n),
      0,
    );
    t.is(Number((await db('events').where({ partner_id: w.partnerId }).count({ n: '*' }))[0]!.n), 0);
    t.is(
      Number((await db('idempotency_keys').where({ partner_id: w.partnerId }).count({ n: '*' }))[0]!.n),
      0,
    );

    const retried = (await createHold({ db, boss }, w.partnerId, input)) as HoldRow;
    t.is(retried.status, 'ACTIVE', 'the key was not spent: the retry places the hold');
    t.is(Number((await db('events').where({ partner_id: w.partnerId }).count({ n: '*' }))[0]!.n), 1);
  },
);

test('20 parallel confirms paying with a package of 3 credits: exactly 3 take a credit, none below zero', async (t) => {
  const { db } = database();
  const w = await makeBookingWorld(db);
  const packageId = await makePackage(db, { venueId: w.venueId, credits: 3 });
  const bought = await purchase(web(0), w.apiKey, packageId);
  const holdIds: string[] = [];
  for (const daysAhead of [1, 2]) {
    for (let index = 0; index < 10; index++)
      holdIds.push((await holdSlot(web(0), w, { daysAhead, index })).holdId);
  }
  const results = await Promise.all(
    holdIds.map((holdId, i) => confirm(web(i), w.apiKey, { hold_id: holdId, use_package_credit: true })),
  );
  t.deepEqual(new Set(results.map((r) => r.status)), new Set([201]));
  t.is(results.filter((r) => r.body.package_credit_consumed === true).length, 3);
  t.is(results.filter((r) => r.body.package_credit_consumed === false).length, 17);
  const row = await db('package_purchases').where({ id: bought.body.purchase.id }).first();
  t.is(row.credits_remaining, 0);
  t.is(
    Number(
      (
        await db('bookings')
          .where({ package_purchase_id: row.id, payment_method: 'package' })
          .count({ n: '*' })
      )[0]!.n,
    ),
    3,
  );
});

test('20 parallel purchases with one key: one purchase, every answer the same', async (t) => {
  const { db } = database();
  const w = await makeBookingWorld(db);
  const packageId = await makePackage(db, { venueId: w.venueId, credits: 5 });
  const key = randomUUID();
  const results = await Promise.all(
    Array.from({ length: 20 }, (_, i) => purchase(web(i), w.apiKey, packageId, { idempotency_key: key })),
  );
  t.deepEqual(new Set(results.map((r) => r.status)), new Set([201]));
  t.is(new Set(results.map((r) => r.text)).size, 1);
  t.is(Number((await db('package_purchases').where({ package_id: packageId }).count({ n: '*' }))[0]!.n), 1);
});

test.serial(
  "a keyed write meeting the previous release's claim of its key (inserted at once, without the key's lock): no 500, no second effect",
  async (t) => {
    // A rolling deploy runs both releases: the previous one claims a key by inserting it first and
    // updates it with its result at the end; this one locks the key and inserts it once, at the end.
    // This write runs its effect, then waits on the claimed key; once that commits, it must roll its
    // effect back and answer from the key, never a 500 for the unique violation.
    const { db } = database();
    const w = await makeBookingWorld(db);
    const [, , slot] = await gridSlots(db, w.venueId, w.court);
    const packageId = await makePackage(db, { venueId: w.venueId, credits: 5 });
    const writes = [
      {
        statement: '%place_hold(%',
        send: (key: string) =>
          hold(web(0), w.apiKey, {
            venue_id: w.venueId,
            resource_id: w.court,
            slot_start: slot!.slot_start,
            idempotency_key: key,
          }),
        effects: () => db('holds').where({ partner_id: w.partnerId }).count({ n: '*' }),
      },
      {
        statement: '%store_idempotency_key(%',
        send: (key: string) => purchase(web(1), w.apiKey, packageId, { idempotency_key: key }),
        effects: () => db('package_purchases').where({ package_id: packageId }).count({ n: '*' }),
      },
    ];
    for (const write of writes) {
      const key = randomUUID();
      const previous = await db.transaction();
      try {
        await previous.raw("select claim_idempotency_key(?, ?, 'hold_release', 'an earlier request')", [
          w.partnerId,
          key,
        ]);
        const answer = write.send(key);
        await waitFor(async () => {
          const { rows } = await db.raw<{ rows: unknown[] }>(
            `select 1 from pg_stat_activity
              where datname = current_database() and wait_event = 'transactionid' and query like ?`,
            [write.statement],
          );
          return rows.length > 0;
        });
        await previous.raw("update idempotency_keys set result = '{}' where partner_id = ? and key = ?", [
          w.partnerId,
          key,
        ]);
        await previous.commit();
        const { status, body } = await answer;
        t.is(status, 409, JSON.stringify(body));
        t.like(body, { error: 'IDEMPOTENCY_KEY_MISMATCH' });
        t.is(Number((await write.effects())[0]!.n), 0, 'the effect rolled back');
      } finally {
        if (!previous.isCompleted()) await previous.rollback();
      }
    }
  },
);

test('20 parallel joins for one customer, resource and date: one entry, every answer naming it', async (t) => {
  const { db } = database();
  const w = await makeBookingWorld(db);
  const target = { venue_id: w.venueId, resource_id: w.court, slot_date: await localDate(db, w.venueId, 1) };
  const results = await Promise.all(Array.from({ length: 20 }, (_, i) => join(web(i), w.apiKey, target)));
  t.deepEqual(new Set(results.map((r) => r.status)), new Set([201]));
  t.is(new Set(results.map((r) => r.body.entry.id as string)).size, 1);
  t.deepEqual(new Set(results.map((r) => r.body.entry.status as string)), new Set(['waiting']));
  t.is(Number((await db('waitlist_entries').where({ partner_id: w.partnerId }).count({ n: '*' }))[0]!.n), 1);
});

test('a hold that loses a deadlock on a free window is retried by the service: 201, never 409', async (t) => {
  const { db } = database();
  const w = await makeBookingWorld(db);
  const [slot] = await gridSlots(db, w.venueId, w.full);
  // The full pitch locks its two halves' rows in id order; a rival that holds the second and then
  // asks for the first closes a cycle. The rival waits 10 s before looking for deadlocks, so the
  // hold (1 s, the server default) is the side PostgreSQL aborts — with nothing overlapping it.
  const [first, second] = [w.halfA, w.halfB].sort() as [string, string];
  const rival = await db.transaction();
  try {
    await rival.raw("set local deadlock_timeout = '10s'");
    await rival.raw('select id from resources where id = ? for update', [second]);
    const placing = hold(web(0), w.apiKey, {
      venue_id: w.venueId,
      resource_id: w.full,
      slot_start: slot!.slot_start,
    });
    await waitFor(async () => {
      const { rows } = await db.raw<{ rows: unknown[] }>(
        `select 1 from pg_stat_activity
          where datname = current_database() and wait_event_type = 'Lock' and pid <> pg_backend_pid()`,
      );
      return rows.length > 0;
    });
    await rival.raw('select id from resources where id = ? for update', [first]);
    await rival.commit();
    const res = await placing;
    t.is(res.status, 201, res.text);
  } finally {
    if (!rival.isCompleted()) await rival.rollback();
  }
  t.is((await db('holds').where({ resource_id: w.full })).length, 1);
});
