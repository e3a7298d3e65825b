/**
 * Hold groups racing for real: parallel requests through two apps with two pools (two web
 * processes) on one database. One winner per window, whatever the mix of groups and single holds,
 * item orders and convertible resources; a free window is never refused.
 */
import test from 'ava';
import { randomUUID } from 'node:crypto';
import { createDb } from '../../db/postgres/knex.ts';
import * as holdGroups from '../../db/queries/hold-groups.ts';
import * as grants from '../../db/queries/venue-grants.ts';
import { hold, makeBookingWorld } from '../helpers/booking.ts';
import { useTestDatabase } from '../helpers/database.ts';
import { makePartner, makeResource } from '../helpers/factories.ts';
import { confirmGroup, createGroup, itemOf, placeGroup, releaseGroup } from '../helpers/hold-groups.ts';
import { startApp, type TestServer } from '../helpers/http.ts';

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

/** Active reservations per unit that overlap another on the same unit: never any. */
async function overlappingReservations(): Promise<number> {
  const { rows } = await database().db.raw<{ rows: { n: number }[] }>(
    `select count(*)::int as n from reservations a join reservations b
        on a.unit_id = b.unit_id and a.id < b.id and a.during && b.during
     where a.active and b.active and (a.expires_at is null or a.expires_at > now())
       and (b.expires_at is null or b.expires_at > now())`,
  );
  return rows[0]!.n;
}

test('20 parallel groups over one shared window: one 201, the rest 409 naming it TAKEN, no 5xx', async (t) => {
  const { db } = database();
  const w = await makeBookingWorld(db);
  const keys = await partnersOf(w.venueId, 20);
  const shared = await itemOf(db, w.venueId, w.court, 4);
  // Each group adds a window of its own on another hour, before or after the shared one.
  const own = await Promise.all(
    keys.map((_, i) => itemOf(db, w.venueId, w.court, i % 4, { daysAhead: 1 + Math.floor(i / 4) })),
  );
  const results = await Promise.all(
    keys.map((key, i) =>
      createGroup(web(i), key, { venue_id: w.venueId, items: i % 2 ? [shared, own[i]] : [own[i], shared] }),
    ),
  );
  const statuses = results.map((r) => r.status);
  t.is(statuses.filter((s) => s === 201).length, 1, statuses.join(','));
  t.is(statuses.filter((s) => s === 409).length, 19, statuses.join(','));
  for (const [i, r] of results.entries()) {
    if (r.status !== 409) continue;
    t.is(r.body.error, 'SLOT_NOT_AVAILABLE');
    t.deepEqual(
      r.body.details.map((d: Record<string, unknown>) => [d.field, d.reason]),
      [[`items.${i % 2 ? 0 : 1}`, 'TAKEN']],
    );
  }
  t.is(await overlappingReservations(), 0);
});

test('two groups over the same windows in opposite item order, many rounds: one wins each round, never a refusal of a free window', async (t) => {
  const { db } = database();
  const w = await makeBookingWorld(db);
  const [first, second] = await partnersOf(w.venueId, 2);
  const rounds = 30;
  let won = 0;
  for (let round = 0; round < rounds; round++) {
    // Three windows on three units, and a whole over two of them: the lock sets overlap in full.
    const windows = [
      await itemOf(db, w.venueId, w.court, round % 16, { daysAhead: 1 + Math.floor(round / 16) }),
      await itemOf(db, w.venueId, w.halfA, round % 16, { daysAhead: 1 + Math.floor(round / 16) }),
      await itemOf(db, w.venueId, w.halfB, round % 16, { daysAhead: 1 + Math.floor(round / 16) }),
    ];
    const [a, b] = await Promise.all([
      createGroup(web(round), first!, { venue_id: w.venueId, items: windows }),
      createGroup(web(round + 1), second!, { venue_id: w.venueId, items: [...windows].reverse() }),
    ]);
    const statuses = [a.status, b.status].sort();
    t.deepEqual(statuses, [201, 409], `round ${round}: ${a.text} ${b.text}`);
    const loser = a.status === 409 ? a : b;
    t.deepEqual(
      loser.body.details.map((d: { reason: string }) => d.reason),
      ['TAKEN', 'TAKEN', 'TAKEN'],
    );
    won += 1;
    // Free the windows again through the winner's release, racing a third group for them.
    const winner = a.status === 201 ? { res: a, key: first! } : { res: b, key: second! };
    const [released, third] = await Promise.all([
      releaseGroup(web(round), winner.key, winner.res.body.hold_group_id),
      createGroup(web(round + 1), winner.key === first ? second! : first!, {
        venue_id: w.venueId,
        items: windows,
      }),
    ]);
    t.is(released.status, 200, released.text);
    t.true([201, 409].includes(third.status), third.text);
    if (third.status === 201) {
      t.is(
        (await releaseGroup(web(round), winner.key === first ? second! : first!, third.body.hold_group_id))
          .status,
        200,
      );
    }
  }
  t.is(won, rounds);
  t.is(await overlappingReservations(), 0);
});

test('a group against single holds on the same units: the winners never overlap, the losers get the right 409', async (t) => {
  const { db } = database();
  const w = await makeBookingWorld(db);
  const keys = await partnersOf(w.venueId, 13);
  const court = await itemOf(db, w.venueId, w.court, 6);
  const full = await itemOf(db, w.venueId, w.full, 6);
  const singles = [
    ...Array.from({ length: 6 }, () => court),
    ...Array.from({ length: 6 }, (_, i) => ({ ...full, resource_id: i % 2 ? w.halfA : w.halfB })),
  ];
  const [group, ...results] = await Promise.all([
    createGroup(web(0), keys[0]!, { venue_id: w.venueId, items: [full, court] }),
    ...singles.map((item, i) => hold(web(i + 1), keys[i + 1]!, { venue_id: w.venueId, ...item })),
  ]);
  t.false([group, ...results].some((r) => r.status >= 500));
  const won = results.filter((r) => r.status === 201).length;
  if (group.status === 201) {
    t.is(won, 0, 'the group holds every unit in play');
  } else {
    t.is(group.status, 409, group.text);
    t.true(won >= 1);
    t.true(won <= 3, 'one court, one of each half');
    for (const d of group.body.details) t.true(['TAKEN', 'TRANSFORMATION_CONFLICT'].includes(d.reason));
  }
  t.is(await overlappingReservations(), 0);
});

test('convertible whole against its parts across groups: one side wins, the other is 409 TRANSFORMATION_CONFLICT', async (t) => {
  const { db } = database();
  const w = await makeBookingWorld(db);
  const keys = await partnersOf(w.venueId, 10);
  for (let round = 0; round < 5; round++) {
    const full = await itemOf(db, w.venueId, w.full, 8 + round);
    const halves = [
      { ...full, resource_id: w.halfA },
      { ...full, resource_id: w.halfB },
    ];
    const results = await Promise.all(
      keys.map((key, i) =>
        createGroup(web(i), key, {
          venue_id: w.venueId,
          items: i % 2 ? [full] : i % 4 ? halves : [...halves].reverse(),
        }),
      ),
    );
    const winners = results.filter((r) => r.status === 201);
    t.is(winners.length, 1, results.map((r) => r.status).join(','));
    const wholeWon = winners[0]!.body.holds.length === 1;
    for (const [i, r] of results.entries()) {
      if (r.status === 201) continue;
      t.is(r.status, 409, r.text);
      const sameSide = (i % 2 === 1) === wholeWon;
      t.is(r.body.error, sameSide ? 'SLOT_NOT_AVAILABLE' : 'TRANSFORMATION_CONFLICT', r.text);
      t.true(
        r.body.details.every(
          (d: { reason: string }) => d.reason === (sameSide ? 'TAKEN' : 'TRANSFORMATION_CONFLICT'),
        ),
      );
    }
  }
  t.is(await overlappingReservations(), 0);
});

test('10 parallel creates with one key and one body: one group, every answer the same 201', async (t) => {
  const { db } = database();
  const w = await makeBookingWorld(db);
  const items = [await itemOf(db, w.venueId, w.court, 14), await itemOf(db, w.venueId, w.full, 14)];
  const key = randomUUID();
  const results = await Promise.all(
    Array.from({ length: 10 }, (_, i) =>
      createGroup(web(i), w.apiKey, { venue_id: w.venueId, items, idempotency_key: key }),
    ),
  );
  t.deepEqual([...new Set(results.map((r) => r.status))], [201]);
  t.is(new Set(results.map((r) => JSON.stringify(r.body))).size, 1);
  t.is(Number((await db('hold_groups').where({ partner_id: w.partnerId }).count({ n: '*' }))[0]!.n), 1);
});

test('parallel confirms of one group: one key gives one set of bookings and the same answer; other keys get 409', async (t) => {
  const { db } = database();
  const w = await makeBookingWorld(db);
  const items = [await itemOf(db, w.venueId, w.court, 12), await itemOf(db, w.venueId, w.halfA, 12)];
  const { groupId } = await placeGroup(web(0), w, items);
  const key = randomUUID();
  const same = await Promise.all(
    Array.from({ length: 10 }, (_, i) => confirmGroup(web(i), w.apiKey, groupId, { idempotency_key: key })),
  );
  t.deepEqual([...new Set(same.map((r) => r.status))], [201]);
  t.is(new Set(same.map((r) => JSON.stringify(r.body))).size, 1);
  t.is(Number((await db('bookings').where({ hold_group_id: groupId }).count({ n: '*' }))[0]!.n), 2);

  const next = await placeGroup(web(0), w, [await itemOf(db, w.venueId, w.court, 13)]);
  const racing = await Promise.all([
    ...Array.from({ length: 6 }, (_, i) => confirmGroup(web(i), w.apiKey, next.groupId)),
    ...Array.from({ length: 6 }, (_, i) => releaseGroup(web(i + 1), w.apiKey, next.groupId)),
  ]);
  const ok = racing.filter((r) => r.status === 200 || r.status === 201);
  t.is(ok.length, 1, racing.map((r) => r.status).join(','));
  t.true(
    racing
      .filter((r) => !ok.includes(r))
      .every((r) => r.status === 409 && r.body.error === 'INVALID_HOLD_STATE'),
  );
  const events = await db('events')
    .whereIn('hold_id', next.holdIds)
    .whereIn('event_type', ['hold_cancelled'])
    .orWhereIn('booking_id', db('bookings').select('id').where({ hold_group_id: next.groupId }));
  t.is(events.length, 1, 'one event for the one change');
});

test('confirms of groups holding the same courts in opposite orders never deadlock: the booked time is written in one order', async (t) => {
  const { db, url } = database();
  const w = await makeBookingWorld(db);
  const other = await makeResource(db, { venueId: w.venueId });
  // The database function itself, without the API's retry of a lost race: a deadlock would throw.
  const pools = [createDb(url, { poolMax: 1 }), createDb(url, { poolMax: 1 })];
  const confirmOn = (i: number, groupId: string) =>
    holdGroups.confirm(pools[i]!, {
      partnerId: w.partnerId,
      idempotencyKey: randomUUID(),
      fingerprint: randomUUID(),
      groupId,
      paymentReference: 'p',
      customerName: 'Asha Rao',
      customerPhone: '+919812345678',
      customerEmail: null,
      usePackageCredit: null,
    });
  try {
    for (let round = 0; round < 24; round++) {
      const day = 1 + (round % 6);
      const base = Math.floor(round / 6) * 4;
      const at = (resource: string, n: number) =>
        itemOf(db, w.venueId, resource, base + n, { daysAhead: day });
      const a = await placeGroup(web(0), w, [await at(w.court, 0), await at(other, 1)]);
      const b = await placeGroup(web(1), w, [await at(other, 2), await at(w.court, 3)]);
      const results = await Promise.allSettled([confirmOn(0, a.groupId), confirmOn(1, b.groupId)]);
      t.deepEqual(
        results.map((r) => (r.status === 'fulfilled' ? 'confirmed' : String(r.reason))),
        ['confirmed', 'confirmed'],
        `round ${round}`,
      );
    }
  } finally {
    await Promise.all(pools.map((p) => p.destroy()));
  }
});
