/**
 * The API against its own contract, for every input: a property-based test generated from the
 * served `/openapi.json`. For every operation of the document, fast-check sends requests whose
 * fields are each either valid for their schema (drawn largely from the real ids, slot starts and
 * dates of a world set up first, so requests reach the use cases and the database) or hostile
 * (`test/helpers/schema-arbitraries.ts`), and checks every answer:
 *
 * - no 5xx;
 * - the status is documented for the operation and the body matches its schema;
 * - an error body has `error`, `message` and `request_id` (the X-Request-Id sent back), and a
 *   VALIDATION_ERROR has `details` of `{field, message, in}` naming a field the operation declares
 *   where it declares it;
 * - a request with a valid key gets the rate-limit headers (a 413 or 431 may come first); one
 *   without a usable key gets 401;
 * - a request that must be refused is not answered 2xx: a value its schemas refuse (as the server
 *   decodes it), a body that is absent, not JSON or not application/json, and what the document
 *   cannot say but CONTRACT.md does (U+0000, lone surrogates, years outside 1900..9999);
 * - a 4xx changed nothing: a digest of every business table (every table of the public schema but
 *   knex's and the unlogged rate-limit ones, listed from the catalog) plus the count of pg-boss jobs
 *   is the same before and after. Requests run one at a time so that a change is attributable.
 *
 * Bounded and reproducible: FUZZ_RUNS requests in all (default 4,000), spread over the operations by
 * how many inputs each has; the seed is FUZZ_SEED when set, else random, and printed on failure.
 * A failing operation stops at its first counterexample, shrunk by fast-check (within a time budget),
 * and prints it with a curl command. FUZZ_SURVEY=1 instead runs every request and lists every
 * distinct failure, deduplicated, with the hostile input shapes behind it: the to-do list.
 *
 * The companion tests at the top are the hand-picked inputs that must never regress.
 */
import test, { type ExecutionContext } from 'ava';
import fc from 'fast-check';
import { randomBytes, randomUUID } from 'node:crypto';
import pg from 'pg';
import type { Knex } from '../../db/knex.ts';
import { confirm, hold, localDate, makeBookingWorld, makeOverdue } from '../helpers/booking.ts';
import { useTestDatabase } from '../helpers/database.ts';
import { makePackage, makeResource, makeVenue } from '../helpers/factories.ts';
import {
  call,
  rawCall,
  startApp,
  type CallResult,
  type RawRequest,
  type TestServer,
} from '../helpers/http.ts';
import { openApiDocument, responseProblems, schemaProblems } from '../helpers/openapi.ts';
import { purchase } from '../helpers/packages.ts';
import {
  bodyText,
  describeRequest,
  escapeInvisible,
  excerpt,
  operationsOf,
  requestArbitrary,
  resolveSchema,
  withOffset,
  type FieldRef,
  type FuzzRequest,
  type Operation,
  type OpenApiDocument,
} from '../helpers/schema-arbitraries.ts';
import { join } from '../helpers/waitlist.ts';
import { startReceiver, subscribe, type Receiver } from '../helpers/webhooks.ts';

const database = useTestDatabase(test);

const TOTAL_RUNS = Number(process.env.FUZZ_RUNS ?? 4000);
const SEED = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : randomBytes(4).readInt32LE();
const SURVEY = process.env.FUZZ_SURVEY === '1';
/** How long fast-check may keep shrinking a counterexample (each step is a real request). */
const SHRINK_BUDGET_MS = 4_000;
const PREFIX = '/api/v1';
const RATE_LIMIT_HEADERS = ['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset-Ms'];
const DETAIL_LOCATIONS = new Set(['body', 'query', 'path', 'header']);
/** X-Request-Id values we echo (CONTRACT.md). */
const SAFE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

interface Fixture {
  server: TestServer;
  receiver: Receiver;
  document: OpenApiDocument;
  world: World;
  /** A connection of its own for the digest, so its statement is planned once (0.7 ms, not 2). */
  digestClient: pg.Client;
  digestSql: string;
}
let fixture: Fixture | undefined;
const fx = (): Fixture => {
  if (!fixture) throw new Error('the fuzz fixture is not ready');
  return fixture;
};

test.before(async () => {
  const { db } = await database.ready();
  const server = await startApp(await database.ready());
  let secret = '';
  const receiver = await startReceiver(() => secret);
  const served = await rawCall(server, { method: 'GET', target: `${PREFIX}/openapi.json` });
  if (served.status !== 200) throw new Error(`GET /openapi.json answered ${served.status}`);
  const world = await buildWorld(db, server, receiver.url);
  secret = world.secret;
  const digestClient = new pg.Client({ connectionString: database().url, application_name: 'fuzz-digest' });
  await digestClient.connect();
  fixture = {
    server,
    receiver,
    document: served.body,
    world,
    digestClient,
    digestSql: await digestStatement(db),
  };
});

test.after.always(async () => {
  await fixture?.digestClient.end();
  await fixture?.server.close();
  await fixture?.receiver.close();
});

// ---------------------------------------------------------------------------------------------
// The world: real ids and values for the generator's pools.

interface World {
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
  pools: Record<string, unknown[]>;
}

async function availability(
  server: TestServer,
  key: string,
  venueId: string,
  date: string,
  resource: string,
) {
  const target = `${PREFIX}/slots/availability?venue_id=${venueId}&date=${date}&resource_id=${resource}`;
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

/**
 * A partner with a granted venue (a court and a convertible full pitch of two halves), holds in
 * every state, bookings booked, cancelled and refunded, a package purchase, waitlist entries, a
 * webhook subscription to a local receiver with dead-lettered deliveries; another partner with the
 * same; a paused and an ungranted venue; a member's phone.
 */
async function buildWorld(db: Knex, server: TestServer, receiverUrl: string): Promise<World> {
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
    must(path, call(server, 'POST', `${PREFIX}${path}`, { key: apiKey, body }));

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
  await must('leave', call(server, 'DELETE', `${PREFIX}/waitlist/${entries[2]}`, { key: w.apiKey }));

  const subscription = await subscribe(server, w.apiKey, receiverUrl);
  const otherSubscription = await subscribe(server, other.apiKey, 'https://example.com/hooks');
  const deliveries = [];
  for (const status of ['dead_letter', 'dead_letter', 'dead_letter', 'delivered'] as const) {
    deliveries.push(await deliveryAttempt(db, w.partnerId, w.venueId, subscription.id, status));
  }
  deliveries.push(
    await deliveryAttempt(db, other.partnerId, other.venueId, otherSubscription.id, 'dead_letter'),
  );

  const slotStarts = starts.flat().slice(11);
  // Mostly keys never used, so that writes get past idempotency; the setup's keys now and then, so
  // that replays and mismatches happen too.
  const fresh = Array.from({ length: 2000 }, () => randomUUID());
  const holds = [...active, memberHold, fullHold, released, overdue, otherHold, spareHold];
  return {
    apiKey: w.apiKey,
    otherKey: other.apiKey,
    wrongKey: randomBytes(32).toString('hex'),
    secret: subscription.secret,
    venueId: w.venueId,
    court: w.court,
    activeHold: active[0]!,
    spareHold,
    spareBooking,
    slotStart: slotStarts[0]!,
    freeStart: starts.at(-3)!.at(-1)!,
    date: day2,
    receiverUrl,
    pools: {
      // Weighted toward the granted venue and its resources, so that most requests can succeed.
      venue: [...Array<string>(6).fill(w.venueId), paused, ungranted, other.venueId],
      resource: [
        w.court,
        w.court,
        w.court,
        w.full,
        w.halfA,
        w.halfB,
        pausedCourt,
        ungrantedCourt,
        other.court,
      ],
      hold: [...holds],
      // Release takes only some of the holds made while fuzzing, leaving the rest for confirm.
      releasable: [...holds],
      booking: [booked, cancelled, refunded, packageBooking, otherBooking],
      package: [packageId, packageId, otherPackage],
      purchase: [bought.purchase.id, otherBought.purchase.id],
      entry: entries,
      subscription: [subscription.id, otherSubscription.id],
      delivery: deliveries,
      date: dates,
      slot_start: [
        ...slotStarts,
        ...slotStarts.slice(0, 8).map((s) => withOffset(new Date(s), 330)),
        ...slotStarts.slice(8, 12).map((s) => withOffset(new Date(s), -300)),
      ],
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
    },
  };
}

/** A delivery of a new event to `subscriptionId`, as five failed attempts (or a success) leave it. */
async function deliveryAttempt(
  db: Knex,
  partnerId: string,
  venueId: string,
  subscriptionId: string,
  status: 'dead_letter' | 'delivered',
): Promise<string> {
  const [event] = await db('events')
    .insert({
      event_type: 'hold_created',
      venue_id: venueId,
      partner_id: partnerId,
      slot_id: randomUUID(),
      details: {},
    })
    .returning('id');
  const attemptId = randomUUID();
  const [delivery] = await db('webhook_deliveries')
    .insert({
      event_id: event.id,
      subscription_id: subscriptionId,
      partner_id: partnerId,
      status,
      attempts: status === 'dead_letter' ? 5 : 1,
      last_attempt_id: attemptId,
      last_status_code: status === 'dead_letter' ? 503 : 200,
      last_attempt_at: db.fn.now(),
    })
    .returning('id');
  await db('webhook_attempts').insert({
    id: attemptId,
    delivery_id: delivery.id,
    attempt: 5,
    started_at: db.fn.now(),
  });
  return attemptId;
}

const POOL_BY_NAME: Record<string, string> = {
  venueId: 'venue',
  venue_id: 'venue',
  resource_id: 'resource',
  holdId: 'releasable',
  hold_id: 'hold',
  bookingId: 'booking',
  packageId: 'package',
  purchaseId: 'purchase',
  entryId: 'entry',
  deliveryId: 'delivery',
  date: 'date',
  slot_date: 'date',
  from: 'date',
  to: 'date',
};

/** The generator's pool: real values of the world for the fields that name them. */
function poolOf(field: FieldRef): readonly unknown[] | undefined {
  const { pools } = fx().world;
  if (field.location === 'path' && field.name === 'id') return pools.subscription;
  return pools[POOL_BY_NAME[field.name] ?? field.name];
}

// ---------------------------------------------------------------------------------------------
// The state digest: one statement over every business table, plus pg-boss's job count.

async function digestStatement(db: Knex): Promise<string> {
  const { rows } = await db.raw<{ rows: { name: string }[] }>(
    `select c.relname as name
       from pg_class c join pg_namespace n on n.oid = c.relnamespace
      where n.nspname = 'public' and c.relkind in ('r', 'p') and c.relpersistence = 'p'
        and c.relname not like 'knex\\_migrations%' and c.relname not like 'rate\\_limit\\_%'
      order by 1`,
  );
  if (rows.length < 10) throw new Error(`only ${rows.length} business tables found`);
  const quote = (name: string) => `"${name.replace(/"/g, '""')}"`;
  return [
    ...rows.map(
      ({ name }) =>
        `select '${name}' as t, count(*) || ':' || coalesce(sum(hashtextextended(x::text, 0)), 0) as d ` +
        `from public.${quote(name)} x`,
    ),
    "select 'pgboss.job', count(*)::text from pgboss.job",
  ].join(' union all ');
}

async function digest(): Promise<Map<string, string>> {
  const { digestClient, digestSql } = fx();
  const { rows } = await digestClient.query<{ t: string; d: string }>({ name: 'digest', text: digestSql });
  return new Map(rows.map((r) => [r.t, r.d]));
}

function changedTables(before: Map<string, string>, after: Map<string, string>): string[] {
  return [...after].filter(([t, d]) => before.get(t) !== d).map(([t]) => t);
}

// ---------------------------------------------------------------------------------------------
// Sending a generated request, and judging the answer.

interface Exchange {
  request: FuzzRequest;
  requestId: string | undefined;
  raw: RawRequest;
  response: CallResult;
  violations: Violation[];
}

interface Violation {
  kind: string;
  detail: string;
}

function toRaw(request: FuzzRequest, requestId: string | undefined): RawRequest {
  const { apiKey, otherKey, wrongKey } = fx().world;
  const headers: [string, string][] = [];
  const key = (value: string) => headers.push(['x-api-key', value]);
  switch (request.credential) {
    case 'valid':
      key(apiKey);
      break;
    case 'other':
      key(otherKey);
      break;
    case 'wrong':
      key(wrongKey);
      break;
    case 'malformed':
      key('not-a-key');
      break;
    case 'nul':
      key(`${apiKey.slice(0, 32)}\u0000${apiKey.slice(32)}`);
      break;
    case 'twice':
      key(apiKey);
      key(apiKey);
      break;
    default:
  }
  if (requestId !== undefined) headers.push(['x-request-id', requestId]);
  const body = bodyText(request.body);
  if (request.body.kind !== 'none' && request.body.contentType)
    headers.push(['content-type', request.body.contentType]);
  const target = `${PREFIX}${request.path}${request.query ? `?${request.query}` : ''}`;
  return { method: request.operation.method, target, headers, ...(body === undefined ? {} : { body }) };
}

/** Sends one request between two digests and lists what is wrong with the answer. */
async function exercise(request: FuzzRequest, requestId?: string): Promise<Exchange> {
  const raw = toRaw(request, requestId);
  const before = await digest();
  let response: CallResult;
  try {
    response = await rawCall(fx().server, raw);
  } catch (err) {
    const violation = { kind: 'no-answer', detail: (err as Error).message };
    const empty = { status: 0, headers: new Headers(), body: undefined, text: '' };
    return { request, requestId, raw, response: empty, violations: [violation] };
  }
  const changed = changedTables(before, await digest());
  grow(request.operation, response);
  return { request, requestId, raw, response, violations: judge(request, requestId, response, changed) };
}

/** Where a created record's id goes, so that later operations act on it (confirm a new hold…). */
const CREATED: Record<string, [pool: string, id: (body: any) => unknown]> = {
  'POST /bookings/hold': ['hold', (b) => b.hold_id],
  'POST /bookings/confirm': ['booking', (b) => b.booking_id],
  'POST /packages/{packageId}/purchase': ['purchase', (b) => b.purchase?.id],
  'POST /waitlist': ['entry', (b) => b.entry?.id],
  'POST /partner/webhooks': ['subscription', (b) => b.data?.id],
};

/**
 * Adds the id a 201 created to its pool. Pools are read when an operation's arbitrary is built,
 * so the ids made while fuzzing one operation feed the operations after it (in document order).
 */
function grow(op: Operation, response: CallResult): void {
  const created = CREATED[`${op.method} ${op.path}`];
  const id = response.status === 201 ? created?.[1](response.body) : undefined;
  const { pools } = fx().world;
  const pool = created && pools[created[0]];
  if (typeof id !== 'string' || !pool || pool.includes(id)) return;
  pool.push(id);
  if (created[0] === 'hold' && pool.length % 3 === 0) pools.releasable!.push(id);
}

function judge(
  request: FuzzRequest,
  requestId: string | undefined,
  res: CallResult,
  changed: string[],
): Violation[] {
  const op = request.operation;
  const out: Violation[] = [];
  const add = (kind: string, detail: string) => out.push({ kind, detail });
  if (res.status >= 500) add('5xx', `${res.status} ${res.body?.error ?? excerpt(res.text, 80)}`);
  for (const problem of responseProblems(fx().document, `${op.method} ${op.path}`, res)) {
    add(
      problem.includes('does not document status') ? 'undocumented-status' : 'body-not-as-documented',
      problem,
    );
  }
  const echoed = res.headers.get('x-request-id');
  if (!echoed) add('request-id', 'no X-Request-Id header');
  else if (requestId !== undefined && SAFE_REQUEST_ID.test(requestId) && echoed !== requestId) {
    add('request-id', `X-Request-Id ${requestId} not echoed (got ${echoed})`);
  }
  if (res.status >= 400) out.push(...errorBodyProblems(op, res));
  const keyed = request.credential === 'valid' || request.credential === 'other';
  // A 413 (body over the limit) or 431 (request head over Node's 16 KiB) may come before the key is read.
  if (op.secured && keyed && res.status !== 413 && res.status !== 431) {
    const missing = RATE_LIMIT_HEADERS.filter((h) => !/^\d+$/.test(res.headers.get(h) ?? ''));
    if (missing.length) add('rate-limit-headers', `missing ${missing.join(', ')} on ${res.status}`);
  }
  // Without a usable key: 401 (U+0000 in a header may be refused as unreadable HTTP: 400), unless
  // the request head was too large to read at all (431).
  const unusable = ['none', 'wrong', 'malformed', 'twice', 'nul'].includes(request.credential ?? '');
  const allowed = request.credential === 'nul' ? [400, 401, 431] : [401, 431];
  if (op.secured && unusable && !allowed.includes(res.status)) {
    add('auth', `x-api-key ${request.credential} answered ${res.status}, not ${allowed.join(' or ')}`);
  }
  if (res.status >= 400 && res.status < 500 && changed.length) {
    add('changed-on-4xx', `${res.status} ${res.body?.error ?? ''} changed ${changed.join(', ')}`);
  }
  if (res.status >= 200 && res.status < 300) {
    const reasons = refusals(request);
    if (reasons.length)
      add('accepted-invalid', `${res.status} for a request to refuse: ${reasons.join('; ')}`);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// What must be refused: the request as the server decodes it, against the document and against
// CONTRACT.md's hardening answers where the document cannot say it.

const JSON_TYPE = /^application\/json\s*(;|$)/i;
const BODY_LIMIT_BYTES = 64 * 1024;

/**
 * Why this request must not succeed, or nothing: a value the document's schemas refuse (path and
 * query values decoded as Koa decodes them, the body parsed as JSON), a body that is absent, not
 * JSON, not application/json or over 64 KiB, a repeated query parameter, or — beyond what the
 * document can say — a string with U+0000 or a lone surrogate, or a date whose year is outside
 * 1900..9999. Fields documented as `{}` (accepted and ignored) are not looked into.
 */
function refusals(request: FuzzRequest): string[] {
  const op = request.operation;
  const out: string[] = [];
  const segments = request.path.split('/');
  op.path.split('/').forEach((segment, i) => {
    const param = op.parameters.find((p) => p.in === 'path' && `{${p.name}}` === segment);
    if (!param) return;
    try {
      out.push(...valueRefusals(param.schema, decodeURIComponent(segments[i] ?? ''), `path ${param.name}`));
    } catch {
      out.push(`path ${param.name}: malformed percent-encoding`);
    }
  });
  const query = new URLSearchParams(request.query);
  for (const p of op.parameters.filter((q) => q.in === 'query')) {
    const values = query.getAll(p.name);
    if (values.length > 1) out.push(`query ${p.name}: repeated`);
    else if (values[0] === undefined) {
      if (p.required) out.push(`query ${p.name}: missing`);
    } else {
      const numeric =
        (p.schema.type === 'integer' || p.schema.type === 'number') && /^-?\d+$/.test(values[0]);
      out.push(...valueRefusals(p.schema, numeric ? Number(values[0]) : values[0], `query ${p.name}`));
    }
  }
  if (op.body) out.push(...bodyRefusals(op.body, request.body));
  return out;
}

function bodyRefusals(schema: Record<string, unknown>, body: FuzzRequest['body']): string[] {
  if (body.kind === 'none') return ['body: absent'];
  if (!body.contentType || !JSON_TYPE.test(body.contentType))
    return [`body: ${body.contentType ?? 'no'} content type`];
  const text = bodyText(body) ?? '';
  if (Buffer.byteLength(text) > BODY_LIMIT_BYTES) return ['body: over 64 KiB'];
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return ['body: not JSON'];
  }
  return valueRefusals(schema, value, 'body');
}

function valueRefusals(schema: Record<string, unknown>, value: unknown, label: string): string[] {
  const document = fx().document;
  return [
    ...schemaProblems(document, schema, value).map(
      (p) => `${label}${p.startsWith('(root)') ? p.slice(6) : ` ${p}`}`,
    ),
    ...contractRefusals(resolveSchema(schema, document), value, label),
  ];
}

/** CONTRACT.md's refusals the document cannot express, found by walking `value` along `schema`. */
function contractRefusals(schema: Record<string, unknown>, value: unknown, label: string): string[] {
  const document = fx().document;
  const described = ['type', 'properties', 'items', 'enum', 'anyOf', 'oneOf', 'allOf', 'format'];
  if (!described.some((key) => key in schema)) return []; // `{}`: accepted and ignored
  if (typeof value === 'string') {
    const out: string[] = [];
    if (value.includes('\u0000')) out.push(`${label}: contains U+0000`);
    if (!value.isWellFormed()) out.push(`${label}: has a lone surrogate`);
    const year = /^(\d{4})-/.exec(value)?.[1];
    if (
      (schema.format === 'date' || schema.format === 'date-time') &&
      year &&
      (+year < 1900 || +year > 9999)
    ) {
      out.push(`${label}: year ${year}`);
    }
    return out;
  }
  if (Array.isArray(value) && schema.items) {
    return value.flatMap((item, i) =>
      contractRefusals(resolveSchema(schema.items, document), item, `${label}.${i}`),
    );
  }
  const properties = schema.properties as Record<string, Record<string, unknown>> | undefined;
  if (value && typeof value === 'object' && properties) {
    return Object.entries(value).flatMap(([key, item]) =>
      properties[key]
        ? contractRefusals(resolveSchema(properties[key], document), item, `${label}.${key}`)
        : [],
    );
  }
  return [];
}

/** Names an operation declares, by location (body: its top-level properties). */
function declaredNames(op: Operation): Record<string, Set<string>> {
  const names: Record<string, Set<string>> = { path: new Set(), query: new Set(), body: new Set() };
  for (const p of op.parameters) names[p.in]!.add(p.name);
  for (const name of Object.keys(op.body?.properties ?? {})) names.body!.add(name);
  return names;
}

function errorBodyProblems(op: Operation, res: CallResult): Violation[] {
  const out: Violation[] = [];
  const add = (detail: string) => out.push({ kind: 'error-body', detail });
  const body = res.body;
  if (!body || typeof body !== 'object') return [{ kind: 'error-body', detail: 'not a JSON object' }];
  if (typeof body.error !== 'string') add('no error code');
  if (typeof body.message !== 'string') add('no message');
  if (typeof body.request_id !== 'string') add('no request_id');
  else if (body.request_id !== res.headers.get('x-request-id'))
    add('request_id is not the X-Request-Id header');
  if (body.error !== 'VALIDATION_ERROR') return out;
  if (!Array.isArray(body.details) || body.details.length === 0) {
    return [...out, { kind: 'validation-details', detail: 'VALIDATION_ERROR without details' }];
  }
  const declared = declaredNames(op);
  for (const d of body.details) {
    if (typeof d?.field !== 'string' || typeof d?.message !== 'string' || !DETAIL_LOCATIONS.has(d?.in)) {
      out.push({ kind: 'validation-details', detail: `malformed entry ${JSON.stringify(d)}` });
      continue;
    }
    const head = d.field.split('.')[0];
    const where = Object.keys(declared).filter((loc) => declared[loc]!.has(head));
    if (d.field === '' || d.in === 'header') continue;
    if (!where.length) {
      out.push({
        kind: 'validation-details',
        detail: `field "${d.field}" (in ${d.in}) is not an input of the operation`,
      });
    } else if (!where.includes(d.in)) {
      out.push({
        kind: 'validation-details',
        detail: `field "${d.field}" says in ${d.in}, declared in ${where.join('/')}`,
      });
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Reporting: deduplicated failures, each with a curl command to reproduce it.

interface Finding {
  operation: string;
  kind: string;
  status: number;
  error: string;
  detail: string;
  count: number;
  tags: Map<string, number>;
  example: Exchange;
}

const findings = new Map<string, Finding>();
let requestsSent = 0;
const startedAt = Date.now();

/** Replaces ids and numbers in a violation's detail so that equal failures share one signature. */
const normalise = (detail: string) =>
  detail
    .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi, '<id>')
    .replace(/\d+ ms/g, 'N ms');

/** Answers by operation (`409 SLOT_NOT_AVAILABLE` → count): how deep the requests reached. */
const answers = new Map<string, Map<string, number>>();

/** Counts the answer and files its violations (hand-picked cases report their own). */
function record(exchange: Exchange, { file = true } = {}): void {
  const op = `${exchange.request.operation.method} ${exchange.request.operation.path}`;
  const counts = answers.get(op) ?? new Map<string, number>();
  const answer = `${exchange.response.status} ${exchange.response.body?.error ?? ''}`.trim();
  answers.set(op, counts.set(answer, (counts.get(answer) ?? 0) + 1));
  if (!file) return;
  for (const v of exchange.violations) {
    const error = String(exchange.response.body?.error ?? '');
    const key = [op, v.kind, exchange.response.status, error, normalise(v.detail)].join(' | ');
    let finding = findings.get(key);
    if (!finding) {
      finding = {
        operation: op,
        kind: v.kind,
        status: exchange.response.status,
        error,
        detail: v.detail,
        count: 0,
        tags: new Map(),
        example: exchange,
      };
      findings.set(key, finding);
    }
    finding.count++;
    // The shortest example is the most readable one.
    if (describeRequest(exchange.request).length < describeRequest(finding.example.request).length)
      finding.example = exchange;
    for (const tag of new Set(exchange.request.tags.map((t) => t.replace(/\(.*\)$/, '')))) {
      finding.tags.set(tag, (finding.tags.get(tag) ?? 0) + 1);
    }
  }
}

const shellQuote = (text: string) => `'${text.replace(/'/g, `'\\''`)}'`;
/**
 * A curl command for the exchange: keys as "$API_KEY" and "$OTHER_KEY", long runs squeezed
 * («a×10000» stands for 10,000 a's), control characters and lone surrogates shown as \uXXXX (a
 * shell cannot carry U+0000 anyway).
 */
function curl(exchange: Exchange): string {
  const { raw } = exchange;
  const { apiKey, otherKey } = fx().world;
  const url = `${fx().server.url}${excerpt(raw.target, 400)}`;
  const parts = [`curl -sS -i -X ${raw.method} ${shellQuote(url)}`];
  for (const [name, value] of raw.headers ?? []) {
    // \uE000 marks where a shell variable goes, outside the single quotes.
    const shown = escapeInvisible(value)
      .replace(`${apiKey.slice(0, 32)}\\u0000${apiKey.slice(32)}`, 'API_KEY with U+0000 after 32 characters')
      .replace(apiKey, '\uE000$API_KEY\uE000')
      .replace(otherKey, '\uE000$OTHER_KEY\uE000');
    parts.push(`-H ${shellQuote(`${name}: ${shown}`).replace(/\uE000(\$\w+)\uE000/g, `'"$1"'`)}`);
  }
  if (raw.body !== undefined) {
    parts.push(`--data-binary ${shellQuote(escapeInvisible(excerpt(String(raw.body), 600)))}`);
  }
  return parts.join(' ');
}

function describeExchange(exchange: Exchange): string {
  const { response } = exchange;
  return [
    `  request:  ${describeRequest(exchange.request)}`,
    exchange.requestId === undefined ? '' : `  x-request-id: ${JSON.stringify(exchange.requestId)}`,
    `  curl:     ${curl(exchange)}`,
    `  response: ${response.status} ${escapeInvisible(excerpt(response.text, 400))}`,
    ...exchange.violations.map((v) => `  ✗ ${v.kind}: ${v.detail}`),
  ]
    .filter(Boolean)
    .join('\n');
}

function describeFinding(f: Finding): string {
  const common = [...f.tags]
    .sort((a, b) => b[1] - a[1])
    .slice(0, 4)
    .map(([tag, n]) => `${tag} (${Math.round((100 * n) / f.count)}%)`);
  return [
    `• ${f.operation} — ${f.kind} — ${f.status} ${f.error} ×${f.count}`,
    `  ${f.detail}`,
    `  input shapes: ${common.join(', ') || 'all valid'}`,
    describeExchange(f.example),
  ].join('\n');
}

function findingsOf(operation?: string): Finding[] {
  return [...findings.values()].filter((f) => operation === undefined || f.operation === operation);
}

// ---------------------------------------------------------------------------------------------
// Hand-picked inputs that must never regress: each is a 400 VALIDATION_ERROR naming its field.

interface Case {
  title: string;
  operation: string;
  target: (w: World) => string;
  body?: (w: World) => unknown;
  field: string;
  in: 'body' | 'query' | 'path';
}

const holdBody = (w: World, overrides: object) => ({
  venue_id: w.venueId,
  resource_id: w.court,
  slot_start: w.slotStart,
  slot_duration_minutes: 60,
  idempotency_key: randomUUID(),
  ...overrides,
});
const confirmBody = (w: World, overrides: object) => ({
  hold_id: w.activeHold,
  payment_reference: 'pay-123',
  customer_name: 'Asha Rao',
  customer_phone: '9812345678',
  idempotency_key: randomUUID(),
  ...overrides,
});
const joinBody = (w: World, overrides: object) => ({
  venue_id: w.venueId,
  resource_id: w.court,
  slot_date: w.date,
  customer_phone: '9812345678',
  ...overrides,
});
const availabilityAt = (date: string) => (w: World) =>
  `/slots/availability?venue_id=${w.venueId}&date=${date}`;
const NUL_KEY = '\u0000nul\u0000';

const CASES: Case[] = [
  ...['0000-01-01', '0001-01-01', '1899-12-31'].map((date): Case => ({
    title: `GET /slots/availability?date=${date}`,
    operation: 'GET /slots/availability',
    target: availabilityAt(date),
    field: 'date',
    in: 'query',
  })),
  ...(['from=0000-01-01', 'from=0001-01-01', 'to=1899-12-31'] as const).map((query): Case => ({
    title: `GET /bookings?${query}`,
    operation: 'GET /bookings',
    target: () => `/bookings?${query}`,
    field: query.split('=')[0]!,
    in: 'query',
  })),
  {
    title: 'GET /bookings?customer_name=%00',
    operation: 'GET /bookings',
    target: () => '/bookings?customer_name=%00',
    field: 'customer_name',
    in: 'query',
  },
  ...['0000-01-01', '0001-01-01', '1899-12-31'].map((date): Case => ({
    title: `POST /waitlist with slot_date ${date}`,
    operation: 'POST /waitlist',
    target: () => '/waitlist',
    body: (w) => joinBody(w, { slot_date: date }),
    field: 'slot_date',
    in: 'body',
  })),
  {
    title: 'POST /waitlist with U+0000 in customer_name',
    operation: 'POST /waitlist',
    target: () => '/waitlist',
    body: (w) => joinBody(w, { customer_name: 'Asha\u0000Rao' }),
    field: 'customer_name',
    in: 'body',
  },
  {
    title: 'POST /bookings/hold with idempotency_key "\\u0000nul\\u0000"',
    operation: 'POST /bookings/hold',
    target: () => '/bookings/hold',
    body: (w) => holdBody(w, { idempotency_key: NUL_KEY }),
    field: 'idempotency_key',
    in: 'body',
  },
  ...['0001-01-01T00:00:00Z', '1899-12-31T23:00:00Z'].map((start): Case => ({
    title: `POST /bookings/hold with slot_start ${start}`,
    operation: 'POST /bookings/hold',
    target: () => '/bookings/hold',
    body: (w) => holdBody(w, { slot_start: start }),
    field: 'slot_start',
    in: 'body',
  })),
  {
    title: 'POST /bookings/confirm with idempotency_key "\\u0000nul\\u0000"',
    operation: 'POST /bookings/confirm',
    target: () => '/bookings/confirm',
    body: (w) => confirmBody(w, { idempotency_key: NUL_KEY }),
    field: 'idempotency_key',
    in: 'body',
  },
  {
    title: 'POST /bookings/confirm with U+0000 in payment_reference',
    operation: 'POST /bookings/confirm',
    target: () => '/bookings/confirm',
    body: (w) => confirmBody(w, { payment_reference: 'pay\u0000123' }),
    field: 'payment_reference',
    in: 'body',
  },
  ...(['cancel', 'refund'] as const).map((verb): Case => ({
    title: `POST /bookings/{bookingId}/${verb} with U+0000 in reason`,
    operation: `POST /bookings/{bookingId}/${verb}`,
    target: (w) => `/bookings/${w.spareBooking}/${verb}`,
    body: () => ({ idempotency_key: randomUUID(), reason: 'changed\u0000plans' }),
    field: 'reason',
    in: 'body',
  })),
  {
    title: 'POST /partner/holds/{holdId}/cancel with U+0000 in reason',
    operation: 'POST /partner/holds/{holdId}/cancel',
    target: (w) => `/partner/holds/${w.spareHold}/cancel`,
    body: () => ({ idempotency_key: randomUUID(), reason: 'changed\u0000plans' }),
    field: 'reason',
    in: 'body',
  },
  {
    title: 'POST /partner/webhooks with U+0000 in endpoint_url',
    operation: 'POST /partner/webhooks',
    target: () => '/partner/webhooks',
    body: (w) => ({
      endpoint_url: w.receiverUrl.replace('/hooks', '/ho\u0000oks'),
      event_types: ['hold_created'],
    }),
    field: 'endpoint_url',
    in: 'body',
  },
];

const operationOf = (name: string): Operation => {
  const [method, path] = name.split(' ') as [string, string];
  const op = operationsOf(fx().document).find((o) => o.method === method && o.path === path);
  if (!op) throw new Error(`${name} is not in the served document`);
  return op;
};

for (const c of CASES) {
  test.serial(`400 VALIDATION_ERROR naming ${c.in} field ${c.field}: ${c.title}`, async (t) => {
    const w = fx().world;
    const target = c.target(w);
    const [path, query = ''] = target.split('?') as [string, string?];
    const body = c.body?.(w);
    const request: FuzzRequest = {
      operation: operationOf(c.operation),
      path,
      query,
      credential: 'valid',
      body:
        body === undefined
          ? { kind: 'none' }
          : { kind: 'json', value: body, contentType: 'application/json' },
      tags: [`${c.in}.${c.field}:hand-picked`],
    };
    const exchange = await exercise(request);
    requestsSent++;
    const { response } = exchange;
    if (response.status !== 400 || response.body?.error !== 'VALIDATION_ERROR') {
      exchange.violations.push({
        kind: 'expected-400',
        detail: `expected 400 VALIDATION_ERROR, got ${response.status}`,
      });
    } else if (!response.body.details?.some((d: any) => d.field === c.field && d.in === c.in)) {
      exchange.violations.push({
        kind: 'expected-field',
        detail: `no details entry {field: ${c.field}, in: ${c.in}}: ${JSON.stringify(response.body.details)}`,
      });
    }
    record(exchange, { file: false });
    t.deepEqual(exchange.violations, [], `\n${describeExchange(exchange)}`);
  });
}

// ---------------------------------------------------------------------------------------------
// The property, per operation of the document.

/** Runs per operation: FUZZ_RUNS spread by weight, 4 plus one per input the operation declares. */
function runsFor(op: Operation, all: Operation[]): number {
  const weight = (o: Operation) => 4 + o.parameters.length + Object.keys(o.body?.properties ?? {}).length;
  const total = all.reduce((sum, o) => sum + weight(o), 0);
  return Math.max(1, Math.round((TOTAL_RUNS * weight(op)) / total));
}

const requestIdArbitrary = fc.oneof(
  { withCrossShrink: true },
  { arbitrary: fc.constant(undefined), weight: 20 },
  { arbitrary: fc.constantFrom('fuzz.req-1:2', 'x'.repeat(129), 'has space', '', 'caf\u00e9'), weight: 1 },
);

async function fuzz(t: ExecutionContext, name: string): Promise<void> {
  const document = fx().document;
  const op = operationOf(name);
  const numRuns = runsFor(op, operationsOf(document));
  let failingSince: number | undefined;
  let sent = 0;
  const property = fc.asyncProperty(
    requestArbitrary(document, op, { pool: poolOf, poolWeight: 8, validWeight: 8 }),
    requestIdArbitrary,
    async (request, requestId) => {
      // Past the shrinking budget, every candidate "passes": fast-check stops at the best so far.
      if (failingSince !== undefined && Date.now() - failingSince > SHRINK_BUDGET_MS) return true;
      const exchange = await exercise(request, requestId);
      sent++;
      record(exchange);
      if (exchange.violations.length === 0 || SURVEY) return true;
      failingSince ??= Date.now();
      throw new Error(`\n${describeExchange(exchange)}`);
    },
  );
  const details = await fc.check(property, { numRuns, seed: SEED });
  requestsSent += sent;
  if (details.failed) {
    t.fail(
      `${name}: a counterexample after ${details.numRuns} runs (${details.numShrinks} shrinks); reproduce with ` +
        `FUZZ_SEED=${details.seed} FUZZ_RUNS=${TOTAL_RUNS} (path ${details.counterexamplePath}); ` +
        `${sent} requests sent.` +
        `${details.errorInstance instanceof Error ? details.errorInstance.message : ''}\n` +
        `Distinct failures of ${name} seen so far:\n${findingsOf(name).map(describeFinding).join('\n')}`,
    );
  } else if (findingsOf(name).length) {
    t.fail(`${name}: distinct failures\n${findingsOf(name).map(describeFinding).join('\n')}`);
  } else t.pass();
}

// Tests are declared from the document built in-process; each runs on the served one, and the first
// test checks that the two list the same operations.
const declared = operationsOf(openApiDocument()).map((o) => `${o.method} ${o.path}`);

test.serial('the digest sees a write: a hold changes holds, events and the pg-boss jobs', async (t) => {
  const w = fx().world;
  const before = await digest();
  const res = await hold(fx().server, w.apiKey, {
    venue_id: w.venueId,
    resource_id: w.court,
    slot_start: w.freeStart,
  });
  t.is(res.status, 201, res.text);
  const changed = changedTables(before, await digest());
  for (const table of ['holds', 'reservations', 'events', 'idempotency_keys', 'pgboss.job']) {
    t.true(changed.includes(table), `${table} not in ${changed.join(', ')}`);
  }
});

test.serial('the served document lists the operations the routes declare', (t) => {
  t.deepEqual(
    operationsOf(fx().document).map((o) => `${o.method} ${o.path}`),
    declared,
  );
});

for (const name of declared) {
  test.serial(`fuzz ${name}: no 5xx, documented answers, a 4xx changes nothing`, (t) => fuzz(t, name));
}

test.serial('fuzz summary', (t) => {
  const seconds = ((Date.now() - startedAt) / 1000).toFixed(1);
  t.log(`${requestsSent} requests in ${seconds} s, seed ${SEED}; ${findings.size} distinct failures`);
  if (!SURVEY) return void t.pass();
  // How deep the requests reached, then the to-do list.
  for (const [op, counts] of answers) {
    const shown = [...counts].sort(([a], [b]) => a.localeCompare(b)).map(([answer, n]) => `${answer} ×${n}`);
    t.log(`${op}: ${shown.join(', ')}`);
  }
  for (const f of findings.values()) t.log(describeFinding(f));
  t.pass();
});
