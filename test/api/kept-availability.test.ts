/**
 * Grids a web process keeps and sends again (api/use-cases/kept-availability.ts): every answer is
 * byte for byte what reading the grid anew gives at that moment, `changes_cursor` included, through
 * every kind of change (holds, releases, confirms, cancels, expiries, operator commands), through
 * what time alone changes (a hold running out before any worker processes it), and while writers
 * race; the partner's access is judged on every request; a change on another date leaves a kept
 * grid standing. The tests run one at a time: the change log's position is the database's, and a
 * write of a test beside would move it between an answer and the read it is compared with.
 */
import test from 'ava';
import { randomUUID } from 'node:crypto';
import { presentAvailability, presentGrid } from '../../api/presenters/availability.ts';
import { keptCounts } from '../../api/use-cases/kept-availability.ts';
import * as holds from '../../db/queries/holds.ts';
import * as slots from '../../db/queries/slots.ts';
import {
  confirm,
  gridSlots,
  hold,
  holdSlot,
  localDate,
  makeBookingWorld,
  expireNow,
  type BookingWorld,
} from '../helpers/booking.ts';
import { useTestDatabase } from '../helpers/database.ts';
import { ops, pollAll } from '../helpers/feed.ts';
import { call, startApp, type TestServer } from '../helpers/http.ts';
import { waitFor } from '../helpers/wait.ts';

const database = useTestDatabase(test);
let web: TestServer[] = [];
test.before(async () => {
  const db = await database.ready();
  web = [await startApp(db), await startApp(db)];
});
test.after.always(async () => {
  for (const s of web) await s?.close();
});

interface Query {
  date: string;
  resource?: string;
}

function pathOf(w: BookingWorld, q: Query): string {
  return (
    `/api/v1/slots/availability?venue_id=${w.venueId}&date=${q.date}` +
    (q.resource ? `&resource_id=${q.resource}` : '')
  );
}

/** The body GET /slots/availability sends. */
async function answer(w: BookingWorld, q: Query, server = web[0]!): Promise<string> {
  const res = await call(server, 'GET', pathOf(w, q), { key: w.apiKey });
  if (res.status !== 200) throw new Error(`availability: ${res.status} ${res.text}`);
  return res.text;
}

/** The body of the grid read anew, as nothing kept is asked about. */
async function readAnew(w: BookingWorld, q: Query): Promise<string> {
  const read = await slots.availableOnDate(database().db, w.partnerId, w.venueId, q.date, q.resource);
  if (read.unchanged) throw new Error('no grid was given as known');
  return presentAvailability(
    presentGrid(w.venueId, q.date, read.grid.days),
    read.grid.changesPosition,
  ).bytes.toString('utf8');
}

/** How many answers were kept grids, and how many were read anew, during `run`. */
async function counted(run: () => Promise<void>): Promise<{ sentAgain: number; readAnew: number }> {
  const before = { ...keptCounts };
  await run();
  return {
    sentAgain: keptCounts.sentAgain - before.sentAgain,
    readAnew: keptCounts.readAnew - before.readAnew,
  };
}

test.serial(
  'every answer equals the grid read anew, through holds, releases, confirms, cancels, expiries and operator commands',
  async (t) => {
    t.timeout(120_000);
    const { db } = database();
    const w = await makeBookingWorld(db);
    const [first, second] = [await localDate(db, w.venueId, 1), await localDate(db, w.venueId, 2)];
    const queries: Query[] = [
      { date: first },
      { date: first, resource: w.court },
      { date: first, resource: w.halfA },
      { date: second },
    ];
    const resources = [w.court, w.halfA, w.halfB, w.full];
    const grids = new Map<string, Awaited<ReturnType<typeof gridSlots>>>();
    for (const r of resources)
      for (const d of [1, 2]) grids.set(`${r}|${d}`, await gridSlots(db, w.venueId, r, d));

    let seed = 11;
    const random = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2 ** 31), seed % n);
    const held: string[] = [];
    const booked: string[] = [];
    const done: Record<string, number> = {};
    const server = () => web[random(2)]!;
    /** One of the ids, at random, taken out of the list. */
    const take = (ids: string[]) => ids.splice(random(ids.length), 1)[0];
    const steps: Record<string, () => Promise<boolean>> = {
      hold: async () => {
        const slot = grids.get(`${resources[random(4)]}|${1 + random(2)}`)![random(8)]!;
        const res = await hold(server(), w.apiKey, {
          venue_id: w.venueId,
          resource_id: slot.resource_id,
          slot_start: slot.slot_start,
        });
        if (res.status === 201) held.push(res.body.hold_id as string);
        return res.status === 201;
      },
      release: async () => {
        const holdId = take(held);
        if (!holdId) return false;
        const res = await call(server(), 'POST', `/api/v1/partner/holds/${holdId}/cancel`, {
          key: w.apiKey,
          body: { idempotency_key: randomUUID() },
        });
        return res.status === 200;
      },
      confirm: async () => {
        const holdId = take(held);
        if (!holdId) return false;
        const res = await confirm(server(), w.apiKey, { hold_id: holdId });
        if (res.status === 201) booked.push(res.body.booking_id as string);
        return res.status === 201;
      },
      cancel: async () => {
        const bookingId = take(booked);
        if (!bookingId) return false;
        const res = await call(server(), 'POST', `/api/v1/bookings/${bookingId}/cancel`, {
          key: w.apiKey,
          body: { idempotency_key: randomUUID() },
        });
        return res.status === 200;
      },
      expire: async () => {
        const holdId = take(held);
        if (!holdId) return false;
        await expireNow(database(), holdId);
        return true;
      },
      price: async () => {
        await ops(
          db,
          'price:add',
          '--resource',
          resources[random(4)]!,
          '--price',
          String(500 + random(900)),
          '--date',
          [first, second][random(2)]!,
        );
        return true;
      },
      blackout: async () => {
        const slot = grids.get(`${w.halfB}|${1 + random(2)}`)![random(8)]!;
        await ops(
          db,
          'blackout:add',
          '--venue',
          w.venueId,
          '--resource',
          w.halfB,
          '--from',
          slot.slot_start.toISOString(),
          '--to',
          slot.slot_end.toISOString(),
        );
        return true;
      },
    };
    const kinds = [...Object.keys(steps), 'hold', 'hold', 'hold', 'confirm'];

    const totals = await counted(async () => {
      for (const q of queries) t.is(await answer(w, q), await readAnew(w, q), 'before any change');
      for (let step = 0; step < 60; step++) {
        const kind = kinds[random(kinds.length)]!;
        if (await steps[kind]!()) done[kind] = (done[kind] ?? 0) + 1;
        for (const q of queries) {
          // Twice on different processes' routes (the same kept grids: one process here): the first
          // may read anew, the second must be the same bytes as the grid read anew after it.
          t.is(
            await answer(w, q, server()),
            await readAnew(w, q),
            `after ${kind} (step ${step}), ${JSON.stringify(q)}`,
          );
          t.is(await answer(w, q, server()), await readAnew(w, q), `again after ${kind} (step ${step})`);
        }
      }
    });
    for (const kind of Object.keys(steps))
      t.true((done[kind] ?? 0) > 0, `${kind} ran: ${JSON.stringify(done)}`);
    // Half the answers at least were kept grids; every change of the first date was read anew.
    t.true(totals.sentAgain >= 60 * queries.length, JSON.stringify(totals));
    t.true(totals.readAnew >= Object.values(done).reduce((a, b) => a + b, 0) / 2, JSON.stringify(totals));
  },
);

test.serial(
  'a change on another date, or at another venue, leaves a kept grid standing; one on its date does not',
  async (t) => {
    const { db } = database();
    const w = await makeBookingWorld(db);
    const other = await makeBookingWorld(db);
    const [first, second] = [await localDate(db, w.venueId, 1), await localDate(db, w.venueId, 2)];
    await answer(w, { date: first });
    const holdOn = (world: BookingWorld, daysAhead: number, index: number) =>
      holdSlot(web[0]!, world, { daysAhead, index });

    let counts = await counted(async () => {
      await holdOn(w, 2, 0);
      await holdOn(other, 1, 0);
      await ops(db, 'price:add', '--resource', w.court, '--price', '777', '--date', second);
      t.is(await answer(w, { date: first }), await readAnew(w, { date: first }));
    });
    t.deepEqual(counts, { sentAgain: 1, readAnew: 0 }, 'kept through changes elsewhere');

    counts = await counted(async () => {
      await holdOn(w, 1, 3);
      t.is(await answer(w, { date: first }), await readAnew(w, { date: first }));
    });
    t.deepEqual(counts, { sentAgain: 0, readAnew: 1 }, 'read anew after a hold on its date');

    counts = await counted(async () => {
      await ops(db, 'price:add', '--resource', w.halfA, '--price', '1234');
      t.is(await answer(w, { date: first }), await readAnew(w, { date: first }));
    });
    t.deepEqual(counts, { sentAgain: 0, readAnew: 1 }, 'read anew after a price rule for every date');
  },
);

test.serial('a hold that runs out shows free at once, before any worker processes it', async (t) => {
  const { db } = database();
  const w = await makeBookingWorld(db, { holdSeconds: 2 });
  const date = await localDate(db, w.venueId, 1);
  const { holdId, slotStart } = await holdSlot(web[0]!, w, { index: 4 });
  const isFree = async () => {
    const body = JSON.parse(await answer(w, { date, resource: w.court }));
    return body.slots.find((s: { slot_start: string }) => s.slot_start === slotStart.toISOString())
      .is_available as boolean;
  };
  t.false(await isFree());
  t.false(await isFree()); // kept now
  await waitFor(
    async () => {
      const { rows } = await db.raw<{ rows: { over: boolean }[] }>(
        'select hold_expiry_at <= now() as over from holds where id = ?',
        [holdId],
      );
      return rows[0]!.over;
    },
    { timeout: 10_000, interval: 50 },
  );
  const { rows } = await db.raw<{ rows: { status: string }[] }>('select status from holds where id = ?', [
    holdId,
  ]);
  t.is(rows[0]!.status, 'ACTIVE', 'no worker has expired it');
  t.true(await isFree());
  t.is(await answer(w, { date, resource: w.court }), await readAnew(w, { date, resource: w.court }));
});

test.serial(
  "a resource's first request is answered from the whole venue's kept grid while it stands",
  async (t) => {
    const { db } = database();
    const w = await makeBookingWorld(db);
    const date = await localDate(db, w.venueId, 1);
    await holdSlot(web[0]!, w, { resource: w.halfA, index: 2 });
    await answer(w, { date });
    const before = { ...keptCounts };
    for (const resource of [w.court, w.halfA, w.halfB]) {
      t.is(await answer(w, { date, resource }), await readAnew(w, { date, resource }), resource);
    }
    t.is(keptCounts.fromVenue - before.fromVenue, 3, 'all three from the venue');
    t.is(keptCounts.readAnew - before.readAnew, 0);
    // The id written otherwise than the database writes it: read anew, the same answer.
    const upper = { date, resource: w.court.toUpperCase() };
    t.is(await answer(w, upper), await readAnew(w, upper));
    t.is(keptCounts.readAnew - before.readAnew, 1);
    // A hold on the date: the next resource is read anew, not taken from the venue's outdated grid.
    await holdSlot(web[0]!, w, { resource: w.halfB, index: 5 });
    t.is(await answer(w, { date, resource: w.full }), await readAnew(w, { date, resource: w.full }));
    t.is(keptCounts.fromVenue - before.fromVenue, 3);
    t.is(keptCounts.readAnew - before.readAnew, 2);
  },
);

test.serial(
  "the partner's access and the resource are judged on every request, kept grid or not",
  async (t) => {
    const { db } = database();
    const w = await makeBookingWorld(db);
    const date = await localDate(db, w.venueId, 1);
    await answer(w, { date });
    await answer(w, { date, resource: w.court });

    const res = await call(web[0]!, 'GET', pathOf(w, { date, resource: randomUUID() }), { key: w.apiKey });
    t.is(res.status, 400);
    t.is(res.body.error, 'VALIDATION_ERROR');

    await ops(db, 'revoke', '--partner', w.partnerId, '--venue', w.venueId);
    for (const q of [{ date }, { date, resource: w.court }]) {
      const revoked = await call(web[0]!, 'GET', pathOf(w, q), { key: w.apiKey });
      t.is(revoked.status, 403);
      t.is(revoked.body.error, 'VENUE_NOT_AUTHORIZED');
    }
    await ops(db, 'grant', '--partner', w.partnerId, '--venue', w.venueId);
    t.is(await answer(w, { date }), await readAnew(w, { date }));
    await ops(db, 'venue:status', '--venue', w.venueId, '--status', 'archived');
    const archived = await call(web[0]!, 'GET', pathOf(w, { date }), { key: w.apiKey });
    t.is(archived.status, 403);
  },
);

test.serial('a grid is read anew once retention has deleted a change of its venue after it', async (t) => {
  const { db } = database();
  const w = await makeBookingWorld(db);
  const date = await localDate(db, w.venueId, 1);
  await answer(w, { date });
  let counts = await counted(async () => void (await answer(w, { date })));
  t.deepEqual(counts, { sentAgain: 1, readAnew: 0 });
  // What prune_availability_changes() leaves of a change it deleted: the venue's purge mark.
  await db.raw(
    `insert into availability_change_purges (venue_id, through_position)
     values (?, (select coalesce(max(position), 0) + 1 from availability_changes))
     on conflict (venue_id) do update set through_position = excluded.through_position`,
    [w.venueId],
  );
  counts = await counted(async () => {
    t.is(await answer(w, { date }), await readAnew(w, { date }));
  });
  t.deepEqual(counts, { sentAgain: 0, readAnew: 1 });
});

test.serial(
  'writers racing on two processes and a late commit: every answer, with the feed after its cursor, ends at the final grid',
  async (t) => {
    t.timeout(120_000);
    const { db } = database();
    const w = await makeBookingWorld(db);
    const date = await localDate(db, w.venueId, 1);
    const resources = [w.court, w.halfA, w.halfB, w.full];
    const grids = new Map(
      await Promise.all(resources.map(async (r) => [r, await gridSlots(db, w.venueId, r, 1)] as const)),
    );

    // The late transaction: a hold whose transaction stays open while the rest runs.
    const late = await db.transaction();
    const lateSlot = (await gridSlots(db, w.venueId, w.court, 1))[15]!;
    await holds.place(late, {
      partnerId: w.partnerId,
      idempotencyKey: `late-${randomUUID()}`,
      fingerprint: 'late',
      venueId: w.venueId,
      resourceId: w.court,
      slotStart: lateSlot.slot_start,
      durationMinutes: 60,
      customerPhone: null,
    });

    let seed = 5;
    const random = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2 ** 31), seed % n);
    const writer = async (client: number) => {
      const server = web[client % 2]!;
      for (let round = 0; round < 12; round++) {
        const resource = resources[random(resources.length)]!;
        const slot = grids.get(resource)![random(6)]!;
        const placed = await hold(server, w.apiKey, {
          venue_id: w.venueId,
          resource_id: resource,
          slot_start: slot.slot_start,
        });
        if (placed.status !== 201) continue;
        const holdId = placed.body.hold_id as string;
        if (random(3) === 0) {
          await call(server, 'POST', `/api/v1/partner/holds/${holdId}/cancel`, {
            key: w.apiKey,
            body: { idempotency_key: randomUUID() },
          });
        } else if (random(2) === 0) {
          const booked = await confirm(server, w.apiKey, { hold_id: holdId });
          if (booked.status === 201 && random(2) === 0) {
            await call(server, 'POST', `/api/v1/bookings/${booked.body.booking_id}/cancel`, {
              key: w.apiKey,
              body: { idempotency_key: randomUUID() },
            });
          }
        }
      }
    };
    let writing = true;
    const answers: { slots: Map<string, boolean>; cursor: string }[] = [];
    const reader = async (client: number) => {
      while (writing) {
        const body = JSON.parse(await answer(w, { date }, web[client % 2]));
        answers.push({
          slots: new Map(
            body.slots.map((s: { slot_id: string; is_available: boolean }) => [s.slot_id, s.is_available]),
          ),
          cursor: body.changes_cursor,
        });
      }
    };
    const readers = [0, 1, 2, 3].map(reader);
    await Promise.all([0, 1, 2, 3].map(writer));
    await late.commit();
    await Promise.all([writer(0), writer(1)]);
    writing = false;
    await Promise.all(readers);
    t.true(answers.length > 20, `${answers.length} answers`);

    const final = await readAnew(w, { date });
    t.is(await answer(w, { date }), final);
    const finalSlots = new Map(
      JSON.parse(final).slots.map((s: { slot_id: string; is_available: boolean }) => [
        s.slot_id,
        s.is_available,
      ]),
    );
    for (const [i, a] of answers.entries()) {
      const { events } = await pollAll(web[0]!, w.apiKey, w.venueId, a.cursor);
      for (const e of events as { type: string; slot_id: string; is_available: boolean; date?: string }[]) {
        if (e.type === 'slot' && a.slots.has(e.slot_id)) a.slots.set(e.slot_id, e.is_available);
      }
      t.deepEqual(a.slots, finalSlots, `answer ${i} at ${a.cursor}, with the feed after it`);
    }
  },
);

test.serial(
  'time alone: a date kept until three hours before it enters or leaves the booking window, a past one for ever',
  async (t) => {
    const { db } = database();
    const w = await makeBookingWorld(db, { timezone: 'America/New_York' });
    const until = async (daysAhead: number) => {
      const { rows } = await db.raw<{
        rows: { until: string; expected_enter: string; expected_leave: string }[];
      }>(
        `select availability_valid_until(v.id, d)::text as until,
              (((d - v.max_advance_days)::timestamp at time zone v.timezone) - interval '3 hours')::text as expected_enter,
              (((d + 1)::timestamp at time zone v.timezone) - interval '3 hours')::text as expected_leave
         from venues v, lateral (select (now() at time zone v.timezone)::date + ?::integer as d) x
        where v.id = ?`,
        [daysAhead, w.venueId],
      );
      return rows[0]!;
    };
    const beyond = await until(21 + 5);
    t.is(beyond.until, beyond.expected_enter, 'beyond the window: kept until it nears entering');
    const tomorrow = await until(1);
    t.is(tomorrow.until, tomorrow.expected_leave, 'inside: kept until it nears leaving');
    t.is((await until(-5)).until, 'infinity', 'past: never shown again');
  },
);
