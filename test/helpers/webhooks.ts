/**
 * Helpers for webhook tests: a subscription made through the API, a real local receiver, a resolver
 * the test controls, and a delivery with its job run by hand.
 *
 * Deliveries go out through undici's own Agent and socket (workers/webhook-http.ts), which nock
 * does not intercept (it patches node:http and global fetch), so these tests point endpoints at
 * names the test resolver answers with 127.0.0.1, where a real receiver listens.
 */
import type { LookupAddress } from 'node:dns';
import {
  createServer,
  type IncomingMessage,
  type RequestListener,
  type Server,
  type ServerResponse,
} from 'node:http';
import { once } from 'node:events';
import { isIP, type AddressInfo, type LookupFunction } from 'node:net';
import type { Config } from '../../db/platform/config.ts';
import { EVENT_TYPES } from '../../db/queries/events.ts';
import * as deliveries from '../../db/queries/webhook-deliveries.ts';
import { MAX_ATTEMPTS } from '../../db/rules/webhook-attempts.ts';
import { sendAttempt, type AttemptDeps } from '../../workers/webhook-deliver.ts';
import { PER_ORIGIN } from '../../workers/webhook-dispatcher.ts';
import { verifyWebhook } from '../../client/src/index.ts';
import type { WebhookEvent } from '../../db/rules/webhook-signature.ts';
import { holdSlot, makeBookingWorld } from './booking.ts';
import type { TestDatabase } from './database.ts';
import { call, type TestServer } from './http.ts';

const ALL_TYPES = [...EVENT_TYPES];

/**
 * Subscribes through the API; returns the subscription id, its secret, and the same secret as
 * Standard Webhooks libraries take it.
 */
export async function subscribe(
  server: TestServer,
  apiKey: string,
  endpointUrl: string,
  eventTypes: string[] = ALL_TYPES,
): Promise<{ id: string; secret: string; standardSecret: string }> {
  const res = await call(server, 'POST', '/api/v1/partner/webhooks', {
    key: apiKey,
    body: { endpoint_url: endpointUrl, event_types: eventTypes },
  });
  if (res.status !== 201) throw new Error(res.text);
  return {
    id: res.body.data.id as string,
    secret: res.body.secret_key as string,
    standardSecret: res.body.standard_webhooks_secret as string,
  };
}

/** One request a receiver got, with its verification. */
export interface Received {
  headers: IncomingMessage['headers'];
  rawBody: string;
  event: WebhookEvent | undefined;
  rejection: string | undefined;
  at: number;
  /** The client's port of the connection it came on: one per connection the sender opened. */
  remotePort: number | undefined;
}

/** An answer: a status, a status with headers, or undefined to never answer. */
export type Answer = number | { status: number; headers: Record<string, string> } | undefined;

/** A local HTTP receiver that verifies every delivery with the partner-side function. */
export interface Receiver {
  url: string;
  port: number;
  received: Received[];
  /** Decides each answer; default 200. May wait (a promise) to hold the attempt in flight. */
  respond: (request: Received) => Answer | Promise<Answer>;
  close(): Promise<void>;
}

export async function startReceiver(secret: () => string): Promise<Receiver> {
  const pending = new Set<ServerResponse>();
  const receiver: Receiver = {
    url: '',
    port: 0,
    received: [],
    respond: () => 200,
    close: async () => {
      for (const res of pending) res.destroy();
      await endpoint.close();
    },
  };
  const endpoint = await startEndpoint((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => void answer());
    const answer = async () => {
      const rawBody = Buffer.concat(chunks).toString('utf8');
      const verdict = verifyWebhook({ rawBody, headers: req.headers, secret: secret() });
      const entry: Received = {
        headers: req.headers,
        rawBody,
        event: verdict.ok ? verdict.event : undefined,
        rejection: verdict.ok ? undefined : verdict.reason,
        at: Date.now(),
        remotePort: req.socket.remotePort,
      };
      receiver.received.push(entry);
      pending.add(res);
      const status = await receiver.respond(entry);
      if (status === undefined || res.destroyed) return;
      pending.delete(res);
      if (typeof status === 'number') res.writeHead(status).end();
      else res.writeHead(status.status, status.headers).end();
    };
  });
  receiver.port = endpoint.port;
  receiver.url = endpoint.url('/hooks');
  return receiver;
}

/** A bare endpoint: its server, its port, the URL of a path on it, and how to close it. */
export interface Endpoint {
  server: Server;
  port: number;
  url: (path: string) => string;
  close: () => Promise<void>;
}

/**
 * An endpoint on 127.0.0.1 answering with `handler` and keeping nothing of its requests (a
 * receiver records each one): for attempts counted, left unanswered, or measured by the heap.
 */
export async function startEndpoint(handler: RequestListener): Promise<Endpoint> {
  const server = createServer(handler);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const port = (server.address() as AddressInfo).port;
  return {
    server,
    port,
    url: (path) => `http://127.0.0.1:${port}${path}`,
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** What a test resolver does for one lookup: an address, an error, a late answer, or (null) nothing. */
export type Resolution = string | Error | { address: string; afterMs: number } | null;

/** A dns.lookup-compatible resolver the test controls, and the lookups it answered. */
export interface TestResolver {
  lookup: LookupFunction;
  calls: { hostname: string; at: number }[];
}

/**
 * A resolver that asks `resolve` what each lookup gets; `call` counts lookups of that name from 1.
 * Answers the array form when asked for `all` (as net.connect does), the single form otherwise.
 */
export function testResolver(resolve: (hostname: string, call: number) => Resolution): TestResolver {
  const calls: TestResolver['calls'] = [];
  const lookup: LookupFunction = (hostname, options, callback) => {
    calls.push({ hostname, at: Date.now() });
    const n = calls.filter((c) => c.hostname === hostname).length;
    const resolution = resolve(hostname, n);
    const answer = (address: string) => {
      const family = isIP(address) || 4;
      if (options.all) callback(null, [{ address, family } satisfies LookupAddress]);
      else callback(null, address, family);
    };
    if (resolution === null) return;
    if (resolution instanceof Error) return void setImmediate(() => callback(resolution, '', 0));
    if (typeof resolution === 'string') return void setImmediate(() => answer(resolution));
    setTimeout(() => answer(resolution.address), resolution.afterMs).unref();
  };
  return { lookup, calls };
}

/** A `getaddrinfo ENOTFOUND` error, as node:dns reports a name that does not exist. */
export function notFound(hostname: string): Error {
  return Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND', hostname });
}

/** Names under `.example.test` answer 127.0.0.1; anything else does not resolve. */
export const localResolver = (): TestResolver =>
  testResolver((hostname) => (hostname.endsWith('.example.test') ? '127.0.0.1' : notFound(hostname)));

/**
 * A hold at a new venue, a subscription of its partner to `endpointUrl`, the delivery the hold
 * published, and ways to run its attempts by hand with `deps` (a config and a resolver of the
 * test's choosing), as the dispatcher would (workers/webhook-dispatcher.ts): claim, send, record.
 */
export async function deliveryFor(
  database: TestDatabase,
  server: TestServer,
  endpointUrl: string,
  deps: { config?: Config; lookup?: LookupFunction } = {},
) {
  const { db } = database;
  const w = await makeBookingWorld(db);
  const sub = await subscribe(server, w.apiKey, endpointUrl, ['hold_created']);
  const held = await holdSlot(server, w);
  const event = await db('events').where({ hold_id: held.holdId, event_type: 'hold_created' }).first();
  const attemptDeps = { config: deps.config ?? database.config, ...(deps.lookup && { lookup: deps.lookup }) };
  const delivery = await db('webhook_deliveries').where({ event_id: event.id }).first();
  const deliveryId = delivery.id as string;
  const state = () => db('webhook_deliveries').where({ id: deliveryId }).first();
  /** Claims this delivery's attempt if it is due: its plan, or undefined. */
  const claim = async () =>
    (
      await deliveries.claimDue(
        db,
        { limit: 1, perOrigin: PER_ORIGIN, busy: new Map(), only: [deliveryId] },
        MAX_ATTEMPTS,
      )
    )[0];
  /**
   * Sends a claimed attempt (with other deps, when given) and records how it went; whether the
   * record changed the delivery.
   */
  const finish = async (plan: deliveries.AttemptPlan, other: Partial<AttemptDeps> = {}) => {
    const settled = await sendAttempt(plan, { ...attemptDeps, ...other });
    return { settled, recorded: (await deliveries.settle(db, [settled])).has(settled.attemptId) };
  };
  /** Runs the attempt due now, if one is: claim, send, record. */
  const runDue = async (other: Partial<AttemptDeps> = {}) => {
    const plan = await claim();
    return plan && finish(plan, other);
  };
  /** Moves the scheduled attempt's time to now, as if its delay had passed. */
  const makeDue = () =>
    db('webhook_deliveries').where({ id: deliveryId }).update({ next_attempt_at: db.fn.now() });
  /** Runs the scheduled attempt once its time has come. */
  const runScheduled = async () => {
    await makeDue();
    return runDue();
  };
  const attempts = () => db('webhook_attempts').where({ delivery_id: deliveryId }).orderBy('attempt');
  return {
    ...w,
    sub,
    event,
    holdId: held.holdId,
    deliveryId,
    state,
    claim,
    finish,
    runDue,
    makeDue,
    runScheduled,
    attempts,
  };
}

/** What {@link deliveryFor} returns. */
export type Delivery = Awaited<ReturnType<typeof deliveryFor>>;
