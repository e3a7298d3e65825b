/**
 * The availability feed under real concurrency: writers on one venue (holds that collide, releases,
 * confirms, cancels, expiries run by the job's handler) on two web processes, one transaction held
 * open before it commits, while pollers and streams on both processes read. Every reader lists each
 * event exactly once, never out of order, the late transaction after every position handed out
 * before it committed, and ends with the state GET /slots/availability shows.
 */
import test from 'ava';
import { randomUUID } from 'node:crypto';
import { isAfter, parseCursor } from '../../api/feed/cursor.ts';
import { createDb } from '../../db/postgres/knex.ts';
import * as holds from '../../db/queries/holds.ts';
import { confirm, expireNow, gridSlots, hold, localDate, makeBookingWorld } from '../helpers/booking.ts';
import { useTestDatabase } from '../helpers/database.ts';
import { openStream, poll, pollAll, type OpenStream } from '../helpers/feed.ts';
import { call, startApp, type TestServer } from '../helpers/http.ts';
import { waitFor } from '../helpers/wait.ts';

const database = useTestDatabase(test);
let web: TestServer[] = [];
let secondPool: ReturnType<typeof createDb> | undefined;
test.before(async () => {
  const db = await database.ready();
  secondPool = createDb(db.url, { poolMax: 5 });
  web = [await startApp(db), await startApp(db, { db: secondPool })];
});
test.after.always(async () => {
  for (const s of web) await s?.close();
  await secondPool?.destroy();
});

type Event = Record<string, unknown> & { cursor: string; slot_id: string; is_available: boolean };

/** What one reader saw: the events in the order it got them, and the state it built from them. */
class Reader {
  readonly events: Event[] = [];
  readonly state: Map<string, boolean>;
  constructor(snapshot: Map<string, boolean>) {
    this.state = new Map(snapshot);
  }
  apply(event: Event): void {
    this.events.push(event);
    if (event.type === 'slot') this.state.set(event.slot_id, event.is_available);
  }
}

/** Every slot of the venue's day, free or not, as GET /slots/availability shows it now. */
async function availability(server: TestServer, apiKey: string, venueId: string, date: string) {
  const res = await call(server, 'GET', `/api/v1/slots/availability?venue_id=${venueId}&date=${date}`, {
    key: apiKey,
  });
  if (res.status !== 200) throw new Error(`availability: ${res.status} ${res.text}`);
  const state = new Map<string, boolean>();
  for (const s of res.body.slots as { slot_id: string; is_available: boolean }[]) {
    state.set(s.slot_id, s.is_available);
  }
  return { state, cursor: res.body.changes_cursor as string };
}

test('writers on two processes and a late commit: every poller and stream lists each event once, in order, and ends at GET /slots/availability', async (t) => {
  t.timeout(120_000);
  const { db } = database();
  const w = await makeBookingWorld(db);
  const date = await localDate(db, w.venueId, 1);
  const start = await availability(web[0]!, w.apiKey, w.venueId, date);

  // Readers: a poller with small pages and a stream on each web process, all from the snapshot.
  const pollers = [new Reader(start.state), new Reader(start.state)];
  const streamReaders = [new Reader(start.state), new Reader(start.state)];
  const streams: OpenStream[] = [];
  for (const server of web) {
    const stream = await openStream(
      server,
      w.apiKey,
      { venue_id: w.venueId },
      { 'last-event-id': start.cursor },
    );
    t.teardown(() => stream.close());
    t.is(stream.status, 200);
    streams.push(stream);
  }
  let writing = true;
  const handedOut = ['', ''].map(() => start.cursor);
  const polling = pollers.map(async (reader, i) => {
    for (;;) {
      const done = !writing;
      const res = await poll(web[i]!, w.apiKey, { venue_id: w.venueId, after: handedOut[i]!, limit: 7 });
      if (res.status !== 200) throw new Error(`poll: ${res.status} ${res.text}`);
      for (const event of res.body.data as Event[]) reader.apply(event);
      handedOut[i] = res.body.next_after as string;
      if (done && !res.body.has_more) return;
      if (!res.body.has_more) await new Promise((r) => setTimeout(r, 20));
    }
  });

  // The late transaction: a hold placed in a transaction that stays open while everything else runs.
  const court = await gridSlots(db, w.venueId, w.court, 1);
  const late = await db.transaction();
  await holds.place(late, {
    partnerId: w.partnerId,
    idempotencyKey: `late-${randomUUID()}`,
    fingerprint: 'late',
    venueId: w.venueId,
    resourceId: w.court,
    slotStart: court[15]!.slot_start,
    durationMinutes: 60,
    customerPhone: null,
  });

  // Writers: four clients over the first six slots of the court and of the convertible pitch (its
  // whole and halves collide on their units), across both processes.
  const resources = [w.court, w.halfA, w.halfB, w.full];
  const grids = new Map(
    await Promise.all(resources.map(async (r) => [r, await gridSlots(db, w.venueId, r, 1)] as const)),
  );
  let seed = 7;
  const random = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2 ** 31), seed % n);
  const outcomes = { held: 0, refused: 0, released: 0, confirmed: 0, cancelled: 0, expired: 0 };
  const writer = async (client: number) => {
    const server = web[client % 2]!;
    for (let round = 0; round < 15; round++) {
      const resource = resources[random(resources.length)]!;
      const slot = grids.get(resource)![random(6)]!;
      const placed = await hold(server, w.apiKey, {
        venue_id: w.venueId,
        resource_id: resource,
        slot_start: slot.slot_start,
      });
      if (placed.status !== 201) {
        outcomes.refused++;
        continue;
      }
      outcomes.held++;
      const holdId = placed.body.hold_id as string;
      switch (random(4)) {
        case 0: {
          const res = await call(server, 'POST', `/api/v1/partner/holds/${holdId}/cancel`, {
            key: w.apiKey,
            body: { idempotency_key: randomUUID() },
          });
          if (res.status === 200) outcomes.released++;
          break;
        }
        case 1: {
          await expireNow(database(), holdId);
          outcomes.expired++;
          break;
        }
        case 2: {
          const booked = await confirm(server, w.apiKey, { hold_id: holdId });
          if (booked.status !== 201) break;
          outcomes.confirmed++;
          if (random(2) === 0) {
            const res = await call(server, 'POST', `/api/v1/bookings/${booked.body.booking_id}/cancel`, {
              key: w.apiKey,
              body: { idempotency_key: randomUUID() },
            });
            if (res.status === 200) outcomes.cancelled++;
          }
          break;
        }
        default:
          break; // left held
      }
    }
  };
  const writers = Promise.all([0, 1, 2, 3].map(writer));

  // While the writers run, the readers move on past positions handed out after the late write began.
  await waitFor(() => pollers.every((p) => p.events.length >= 10), { timeout: 60_000 });
  const beforeCommit = [...handedOut];
  await late.commit();
  await writers;
  writing = false;
  await Promise.all(polling);
  t.true(outcomes.held > 10 && outcomes.refused > 0, JSON.stringify(outcomes));

  // One final read of the whole feed: what every reader must have listed, in this order.
  const reference = (await pollAll(web[0]!, w.apiKey, w.venueId, start.cursor)).events as Event[];
  const lastCursor = reference.at(-1)!.cursor;
  await waitFor(() => streams.every((s) => s.events().some((e) => e.id === lastCursor)), { timeout: 20_000 });
  for (const [i, stream] of streams.entries()) {
    const [hello, ...rest] = stream.events();
    t.is(hello!.event, 'hello');
    t.is(hello!.id, start.cursor);
    for (const frame of rest) streamReaders[i]!.apply(frame.data as Event);
  }

  const final = await availability(web[1]!, w.apiKey, w.venueId, date);
  const referenceCursors = reference.map((e) => e.cursor);
  for (const [name, reader] of [
    ['poller on web 1', pollers[0]!],
    ['poller on web 2', pollers[1]!],
    ['stream on web 1', streamReaders[0]!],
    ['stream on web 2', streamReaders[1]!],
  ] as const) {
    const cursors = reader.events.map((e) => e.cursor);
    t.deepEqual(cursors, referenceCursors, `${name}: every event exactly once, in the log's order`);
    for (let k = 1; k < cursors.length; k++) {
      const at = parseCursor(cursors[k]!)!;
      if (!isAfter({ position: at.position, k: at.k! }, parseCursor(cursors[k - 1]!)!)) {
        t.fail(`${name}: ${cursors[k]} after ${cursors[k - 1]}`);
      }
    }
    t.deepEqual(reader.state, final.state, `${name}: the state built from the feed is the snapshot's`);
  }

  // The late hold's change is listed after every position the pollers had been handed before it
  // committed, never behind one they had already moved past.
  const { position: latePosition } = await db('availability_changes')
    .where({ venue_id: w.venueId })
    .whereRaw('windows @> array[tstzrange(?, ?)]', [court[15]!.slot_start, court[15]!.slot_end])
    .first<{ position: string }>('position');
  for (const cursor of beforeCommit) t.true(BigInt(latePosition) > parseCursor(cursor)!.position);
  t.truthy(reference.find((e) => parseCursor(e.cursor)!.position === BigInt(latePosition)));
});
