/**
 * The world the fuzz runs against, set up once per file before the first request: real partners,
 * venues, holds, bookings, purchases, waitlist entries and webhook subscriptions, and pools of their
 * ids and values for the generator to draw from. Random uuids alone would only ever find "not
 * found"; with the pools, most requests reach the use cases and the database, in every state a
 * record can be in. The records themselves are made in `world-records.ts`.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import type { Knex } from '../../../db/postgres/knex.ts';
import { localDate, makeBookingWorld } from '../booking.ts';
import { makeResource, makeVenue } from '../factories.ts';
import type { Pools } from './pools.ts';
import {
  availability,
  makeEntries,
  makeHoldsAndBookings,
  makePackagesAndOthers,
  makeWebhooks,
  setupCalls,
  type Setup,
  type Venues,
} from './world-records.ts';
import type { TestServer } from '../http.ts';
import { withOffset } from './valid-values.ts';

/** The partner under test's credentials, records the hand-picked cases use, and the pools. */
export interface World {
  apiKey: string;
  otherKey: string;
  wrongKey: string;
  secret: string;
  venueId: string;
  court: string;
  activeHold: string;
  spareHold: string;
  spareBooking: string;
  slotStart: string;
  /** A start no setup request holds, for the digest's own check. */
  freeStart: string;
  date: string;
  receiverUrl: string;
  /** Grown while fuzzing: ids that a 201 created join their pool (see `grow`). */
  pools: Pools;
}

/**
 * A partner with a granted venue (a court and a convertible full pitch of two halves), holds in
 * every state, bookings booked, cancelled and refunded, a package purchase, waitlist entries, a
 * webhook subscription to a local receiver with dead-lettered deliveries; another partner with the
 * same; a paused and an ungranted venue; a member's phone.
 */
export async function buildWorld(db: Knex, server: TestServer, receiverUrl: string): Promise<World> {
  const setup = setupCalls(db, server, await makeVenues(db, server));
  const bookings = await makeHoldsAndBookings(setup);
  const packages = await makePackagesAndOthers(setup);
  const entries = await makeEntries(setup);
  const webhooks = await makeWebhooks(setup, receiverUrl);
  return worldOf(setup, { ...bookings, ...packages, entries, ...webhooks }, receiverUrl);
}

/** The venues (granted, another partner's, paused, ungranted), a member, dates and free starts. */
async function makeVenues(db: Knex, server: TestServer): Promise<Venues> {
  const w = await makeBookingWorld(db);
  const other = await makeBookingWorld(db);
  const paused = await makeVenue(db, { status: 'paused', grantTo: [w.partnerId] });
  const pausedCourt = await makeResource(db, { venueId: paused });
  const ungranted = await makeVenue(db);
  const ungrantedCourt = await makeResource(db, { venueId: ungranted });
  const member = '+919876543210';
  await db('memberships').insert({ venue_id: w.venueId, customer_phone: member, discount_percent: 20 });
  const dates = await Promise.all([-1, 0, 1, 2, 3, 4, 5].map((d) => localDate(db, w.venueId, d)));
  const [, , day1, day2, day3] = dates as [string, string, string, string, string];
  const court = await availability(server, w.apiKey, w.venueId, day1, w.court);
  const starts = [court];
  for (const day of [day2, day3]) {
    for (const r of [w.court, w.full, w.halfA])
      starts.push(await availability(server, w.apiKey, w.venueId, day, r));
  }
  return {
    w,
    other,
    paused,
    pausedCourt,
    ungranted,
    ungrantedCourt,
    member,
    dates,
    day2,
    day3,
    court,
    starts,
  };
}

/** Everything the setup made, by name. */
type Records = Awaited<ReturnType<typeof makeHoldsAndBookings>> &
  Awaited<ReturnType<typeof makePackagesAndOthers>> &
  Awaited<ReturnType<typeof makeWebhooks>> & { entries: string[] };

/** The world: what the cases name, and pools weighted toward what can succeed. */
function worldOf({ venues, usedKeys }: Setup, r: Records, receiverUrl: string): World {
  const { w, other, starts } = venues;
  const slotStarts = starts.flat().slice(11);
  // Mostly keys never used, so that writes get past idempotency; the setup's keys now and then, so
  // that replays and mismatches happen too.
  const fresh = Array.from({ length: 2000 }, () => randomUUID());
  return {
    apiKey: w.apiKey,
    otherKey: other.apiKey,
    wrongKey: randomBytes(32).toString('hex'),
    secret: r.subscription.secret,
    venueId: w.venueId,
    court: w.court,
    activeHold: r.active[0]!,
    spareHold: r.spareHold,
    spareBooking: r.spareBooking,
    slotStart: slotStarts[0]!,
    freeStart: starts.at(-3)!.at(-1)!,
    date: venues.day2,
    receiverUrl,
    pools: {
      ...recordPools(venues, r, slotStarts),
      ...valuePools(venues.member, usedKeys, fresh, receiverUrl),
    },
  };
}

/** Pools of the world's records, dates and slot starts (some written at other offsets). */
function recordPools(venues: Venues, r: Records, slotStarts: string[]): Pools {
  const { w, other } = venues;
  const holds = [...r.active, r.memberHold, r.fullHold, r.released, r.overdue, r.otherHold, r.spareHold];
  return {
    // Weighted toward the granted venue and its resources, so that most requests can succeed.
    venue: [...Array<string>(6).fill(w.venueId), venues.paused, venues.ungranted, other.venueId],
    resource: [
      w.court,
      w.court,
      w.court,
      w.full,
      w.halfA,
      w.halfB,
      venues.pausedCourt,
      venues.ungrantedCourt,
      other.court,
    ],
    hold: [...holds],
    // Release takes only some of the holds made while fuzzing, leaving the rest for confirm.
    releasable: [...holds],
    booking: [r.booked, r.cancelled, r.refunded, r.packageBooking, r.otherBooking],
    package: [r.packageId, r.packageId, r.otherPackage],
    purchase: r.purchases,
    entry: r.entries,
    subscription: [r.subscription.id, r.otherSubscription.id],
    delivery: r.deliveries,
    date: venues.dates,
    slot_start: [
      ...slotStarts,
      ...slotStarts.slice(0, 8).map((s) => withOffset(new Date(s), 330)),
      ...slotStarts.slice(8, 12).map((s) => withOffset(new Date(s), -300)),
      // Off the grid, from the court's first start of a day: after the day before closed, before
      // it opens, between two starts, after it closes.
      ...[-7 * 60, -5 * 60, 30, 17 * 60].map((minutes) => shifted(venues.court[0]!, minutes)),
    ],
  };
}

/** `start` moved by `minutes`, in UTC. */
function shifted(start: string, minutes: number): string {
  return new Date(new Date(start).getTime() + minutes * 60_000).toISOString();
}

/** Pools of plain values: durations, keys, phones, names, references, URLs, limits. */
function valuePools(member: string, usedKeys: string[], fresh: string[], receiverUrl: string): Pools {
  return {
    slot_duration_minutes: [60, 60, 60, 60, 120, 30, 90],
    idempotency_key: [...usedKeys, ...usedKeys, ...usedKeys, ...usedKeys, ...fresh],
    customer_phone: ['9812345678', '+919812345678', member, '9876543210', '98123 45678'],
    customer_name: ['Asha Rao', 'Zo\u00eb \u00dcnal \u{1F3F8}', '  Ravi Kumar  ', '\u0905\u0936\u093e'],
    payment_reference: ['pay-123', 'UPI/2026/000123'],
    reason: ['changed plans', ''],
    endpoint_url: [receiverUrl, receiverUrl, 'https://example.com/hooks'],
    customer_email: ['asha@example.com'],
    expires_in_days: [1, 7, 30],
    limit: [1, 2, 50, 100],
  };
}
