/**
 * The records of the fuzz world (`world.ts`), made through the API wherever the API can make
 * them, so that they are exactly what the service itself writes: holds in every state, bookings
 * booked, cancelled and refunded, package purchases, waitlist entries, webhook subscriptions. Only
 * what no request can produce is written directly: an overdue hold, and webhook deliveries that
 * failed five times (dead-lettered) or succeeded. Every setup request must succeed; the idempotency
 * keys they use are kept, so that the fuzz replays them now and then.
 */
import { randomUUID } from 'node:crypto';
import type { Knex } from '../../../db/postgres/knex.ts';
import { publishedEvent } from '../events.ts';
import { confirm, hold, makeOverdue, type BookingWorld } from '../booking.ts';
import { makePackage } from '../factories.ts';
import { call, type CallResult, type TestServer } from '../http.ts';
import { purchase } from '../packages.ts';
import { join } from '../waitlist.ts';
import { subscribe } from '../webhooks.ts';

/** Where the API is mounted on the test server. */
import { API_PREFIX } from '../../../api/route.ts';

export { API_PREFIX };

/** The venues of the world and the slot starts the setup books from. */
export interface Venues {
  /** The partner under test, with a granted venue: a court and a full pitch of two halves. */
  w: BookingWorld;
  /** Another partner with the same. */
  other: BookingWorld;
  paused: string;
  pausedCourt: string;
  ungranted: string;
  ungrantedCourt: string;
  /** A member's phone at the granted venue (20% off). */
  member: string;
  /** The venue's local dates from yesterday to five days ahead. */
  dates: string[];
  day2: string;
  day3: string;
  /** The court's free slot starts tomorrow. */
  court: string[];
  /** Free slot starts: `court`, then court, full and half A two and three days ahead. */
  starts: string[][];
}

/** The setup's requests, each of which must succeed, with the idempotency keys they used. */
export interface Setup {
  db: Knex;
  server: TestServer;
  venues: Venues;
  usedKeys: string[];
  /** A fresh idempotency key, kept in `usedKeys`. */
  key: () => string;
  /** Holds `start` of `resource`; returns the hold id. */
  holdAt: (
    apiKey: string,
    venueId: string,
    resource: string,
    start: string,
    extra?: object,
  ) => Promise<string>;
  /** Confirms the hold; returns the booking id. */
  confirmHold: (apiKey: string, holdId: string, extra?: object) => Promise<string>;
  /** POSTs `body` to `path` under the API prefix; returns the answer's body. */
  post: (apiKey: string, path: string, body: unknown) => Promise<any>;
}

/** The free slot starts of `resource` at `venueId` on `date`. */
export async function availability(
  server: TestServer,
  key: string,
  venueId: string,
  date: string,
  resource: string,
) {
  const target = `${API_PREFIX}/slots/availability?venue_id=${venueId}&date=${date}&resource_id=${resource}`;
  const res = await call(server, 'GET', target, { key });
  if (res.status !== 200) throw new Error(`availability: ${res.status} ${res.text}`);
  return (res.body.slots as { slot_start: string }[]).map((s) => s.slot_start);
}

/** Sends a setup request that must succeed, and returns its body. */
async function must(label: string, pending: Promise<CallResult>): Promise<any> {
  const res = await pending;
  if (res.status >= 300) throw new Error(`${label}: ${res.status} ${res.text}`);
  return res.body;
}

/** The setup's requests on `server`, each with a fresh idempotency key kept in `usedKeys`. */
export function setupCalls(db: Knex, server: TestServer, venues: Venues): Setup {
  const usedKeys: string[] = [];
  const key = () => {
    const k = randomUUID();
    usedKeys.push(k);
    return k;
  };
  const holdAt = async (apiKey: string, venueId: string, resource: string, start: string, extra = {}) =>
    (
      await must(
        'hold',
        hold(server, apiKey, {
          venue_id: venueId,
          resource_id: resource,
          slot_start: start,
          idempotency_key: key(),
          ...extra,
        }),
      )
    ).hold_id as string;
  const confirmHold = async (apiKey: string, holdId: string, extra = {}) =>
    (await must('confirm', confirm(server, apiKey, { hold_id: holdId, idempotency_key: key(), ...extra })))
      .booking_id as string;
  const post = (apiKey: string, path: string, body: unknown) =>
    must(path, call(server, 'POST', `${API_PREFIX}${path}`, { key: apiKey, body }));
  return { db, server, venues, usedKeys, key, holdAt, confirmHold, post };
}

/** Holds active, released, overdue, a member's and a full pitch's; bookings booked, cancelled, refunded. */
export async function makeHoldsAndBookings({ db, venues, key, holdAt, confirmHold, post }: Setup) {
  const { w, court, starts, member } = venues;
  const at = (i: number) => court[i]!;
  const active = [
    await holdAt(w.apiKey, w.venueId, w.court, at(0)),
    await holdAt(w.apiKey, w.venueId, w.court, at(1)),
  ];
  const booked = await confirmHold(w.apiKey, await holdAt(w.apiKey, w.venueId, w.court, at(2)));
  const cancelled = await confirmHold(w.apiKey, await holdAt(w.apiKey, w.venueId, w.court, at(3)));
  await post(w.apiKey, `/bookings/${cancelled}/cancel`, { idempotency_key: key(), reason: 'rain' });
  const refunded = await confirmHold(w.apiKey, await holdAt(w.apiKey, w.venueId, w.court, at(4)));
  await post(w.apiKey, `/bookings/${refunded}/refund`, { idempotency_key: key() });
  const released = await holdAt(w.apiKey, w.venueId, w.court, at(5));
  await post(w.apiKey, `/partner/holds/${released}/cancel`, { idempotency_key: key() });
  const overdue = await holdAt(w.apiKey, w.venueId, w.court, at(6));
  await makeOverdue(db, overdue);
  const memberHold = await holdAt(w.apiKey, w.venueId, w.court, at(7), { customer_phone: member });
  const spareHold = await holdAt(w.apiKey, w.venueId, w.court, at(8));
  const spareBooking = await confirmHold(w.apiKey, await holdAt(w.apiKey, w.venueId, w.court, at(9)));
  const fullHold = await holdAt(w.apiKey, w.venueId, w.full, starts[1]![2]!);
  return {
    active,
    booked,
    cancelled,
    refunded,
    released,
    overdue,
    memberHold,
    spareHold,
    spareBooking,
    fullHold,
  };
}

/** A package of each partner bought, one booking paid with a credit; the other partner's hold and booking. */
export async function makePackagesAndOthers({ db, server, venues, key, holdAt, confirmHold }: Setup) {
  const { w, other, court } = venues;
  const at = (i: number) => court[i]!;
  const packageId = await makePackage(db, { venueId: w.venueId });
  const bought = await must('purchase', purchase(server, w.apiKey, packageId, { idempotency_key: key() }));
  const packageBooking = await confirmHold(w.apiKey, await holdAt(w.apiKey, w.venueId, w.court, at(10)), {
    use_package_credit: true,
  });
  const otherPackage = await makePackage(db, { venueId: other.venueId });
  const otherBought = await must('purchase', purchase(server, other.apiKey, otherPackage));
  const otherHold = await holdAt(other.apiKey, other.venueId, other.court, at(0));
  const otherBooking = await confirmHold(
    other.apiKey,
    await holdAt(other.apiKey, other.venueId, other.court, at(1)),
  );
  const purchases = [bought.purchase.id as string, otherBought.purchase.id as string];
  return { packageId, packageBooking, otherPackage, purchases, otherHold, otherBooking };
}

/** Waitlist entries of both partners; the third entry is left again. */
export async function makeEntries({ server, venues }: Setup): Promise<string[]> {
  const { w, other, day2, day3, member } = venues;
  const entry = (
    apiKey: string,
    body: { venue_id: string; resource_id: string; slot_date: string } & Record<string, unknown>,
  ) => must('join', join(server, apiKey, body)).then((b) => b.entry.id as string);
  const entries = [
    await entry(w.apiKey, {
      venue_id: w.venueId,
      resource_id: w.court,
      slot_date: day2,
      customer_name: 'Asha',
    }),
    await entry(w.apiKey, {
      venue_id: w.venueId,
      resource_id: w.full,
      slot_date: day3,
      customer_phone: member,
    }),
    await entry(w.apiKey, { venue_id: w.venueId, resource_id: w.halfA, slot_date: day2 }),
    await entry(other.apiKey, { venue_id: other.venueId, resource_id: other.court, slot_date: day2 }),
  ];
  await must('leave', call(server, 'DELETE', `${API_PREFIX}/waitlist/${entries[2]}`, { key: w.apiKey }));
  return entries;
}

/** A subscription of each partner (ours to `receiverUrl`), with deliveries dead-lettered and delivered. */
export async function makeWebhooks({ db, server, venues }: Setup, receiverUrl: string) {
  const { w, other } = venues;
  const subscription = await subscribe(server, w.apiKey, receiverUrl);
  const otherSubscription = await subscribe(server, other.apiKey, 'https://example.com/hooks');
  const deliveries = [];
  for (const status of ['dead_letter', 'dead_letter', 'dead_letter', 'delivered'] as const) {
    deliveries.push(await deliveryAttempt(db, w.partnerId, w.venueId, subscription.id, status));
  }
  deliveries.push(
    await deliveryAttempt(db, other.partnerId, other.venueId, otherSubscription.id, 'dead_letter'),
  );
  return { subscription, otherSubscription, deliveries };
}

/** A delivery of a new event to `subscriptionId`, as five failed attempts (or a success) leave it. */
async function deliveryAttempt(
  db: Knex,
  partnerId: string,
  venueId: string,
  subscriptionId: string,
  status: 'dead_letter' | 'delivered',
): Promise<string> {
  const eventId = await publishedEvent(db, partnerId, venueId);
  const attemptId = randomUUID();
  const [delivery] = await db('webhook_deliveries')
    .insert({
      event_id: eventId,
      subscription_id: subscriptionId,
      partner_id: partnerId,
      status,
      attempts: status === 'dead_letter' ? 5 : 1,
      last_attempt_id: attemptId,
      last_status_code: status === 'dead_letter' ? 503 : 200,
      last_attempt_at: db.fn.now(),
      next_attempt_id: null,
      next_attempt_at: null,
    })
    // Publishing made the delivery, pending; it becomes what its attempts left.
    .onConflict(['event_id', 'subscription_id'])
    .merge()
    .returning('id');
  await db('webhook_attempts').insert({
    id: attemptId,
    delivery_id: delivery.id,
    attempt: 5,
    started_at: db.fn.now(),
  });
  return attemptId;
}
