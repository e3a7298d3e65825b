/**
 * The HTTP client of webhook attempts: one signed POST, under one deadline, to an address that was
 * checked. `fetch` resolved the endpoint's name again after our check, so a name answering a public
 * address first and 127.0.0.1 next (DNS rebinding) got a signed POST into the private network. Here
 * the check runs inside the connection: undici hands its Agent's `connect` options to
 * `net.connect`/`tls.connect` (undici `lib/core/connect.js`, `buildConnector`), so our `lookup`
 * is the resolver of the very socket that is dialled, and it refuses any non-public answer. Node
 * skips `lookup` for an IP-literal host, so those are checked before anything is sent.
 *
 * Connections are kept alive and pooled per origin (scheme and authority: undici's Agent keeps one
 * pool per origin), so consecutive attempts to one endpoint share a socket, and over TLS a
 * handshake, instead of opening one each: a fresh connection per attempt cost the worker about as
 * much CPU as the rest of the attempt (docs/BENCHMARKS.md). Pooling changes nothing of the check:
 * every socket is checked when it is dialled, a pooled socket is only ever reused for its own
 * origin (the address it was checked for), and a name that rebinds meets the check again on the
 * next socket it needs. A pool holds at most `socketsPerOrigin` sockets, idle ones for no longer
 * than KEEP_ALIVE_MS (or the endpoint's shorter `Keep-Alive: timeout`).
 *
 * The default resolver is `lookupHost` (db/platform/host-resolver.ts): DNS through c-ares, on the event loop,
 * failing a name whose DNS never answers within HOST_LOOKUP_TIMEOUT_MS (3 s). node:dns `lookup` is
 * getaddrinfo on libuv's 4-thread pool, so a partner whose DNS never answered held a thread per
 * attempt for as long as the system resolver tried, and a handful of attempts stalled every other
 * partner's lookups and the worker's file writes.
 *
 * One AbortSignal bounds each request: waiting for a socket, connect, TLS, headers and body; the
 * attempt ends at its deadline whatever the socket does, and an aborted request's socket is
 * destroyed, never returned to the pool. undici alone does not end an attempt on time: an abort
 * before the socket connects only takes effect once the connect settles (measured with undici
 * 7.30, a hanging lookup held a 300 ms request for 986 ms), so the attempt races its own deadline,
 * and a lookup that never calls back is failed after the timeout, freeing the pool's slot.
 */
import type { LookupAddress, LookupOptions } from 'node:dns';
import type { LookupFunction } from 'node:net';
import { Agent, request } from 'undici';
import { lookupHost } from '../db/platform/host-resolver.ts';
import { ipLiteralHost, isNonPublicAddress } from '../db/rules/webhook-targets.ts';

/** The most response body read (and thrown away) before the connection is dropped. */
const MAX_RESPONSE_BODY_BYTES = 64 * 1024;
/** Sockets one origin's pool keeps, at most, for a client not told otherwise (`socketsPerOrigin`). */
const SOCKETS_PER_ORIGIN = 16;
/**
 * How long an idle pooled socket is kept, at most, for the next attempt to its origin: below the
 * idle timeouts common servers close connections after (Node 5 s, Apache 5 s, nginx 75 s), so that
 * an endpoint seldom closes a socket just as an attempt is sent on it. A busy origin's sockets are
 * never idle that long; a quiet one's cost a new connection, as every attempt did before.
 */
const KEEP_ALIVE_MS = 4_000;

/**
 * The last_error of a target refused for its address, and, where private targets are not allowed,
 * of a host that does not resolve: one reason for both, so that a partner cannot tell which
 * internal names exist (CONTRACT.md, "One refusal reason"). Coarse, never the address.
 */
export const NON_PUBLIC_TARGET = "the endpoint's host does not resolve to public addresses only";
/** The last_error of a host name that does not resolve, where private targets are allowed (local). */
export const UNRESOLVED_TARGET = "the endpoint's host does not resolve";

/**
 * Lookup error codes that mean "this name has no usable address": node:dns' own, which `lookupHost`
 * also uses (EAI_AGAIN for a DNS timeout or server failure, ENOTFOUND from its hosts-file fallback).
 */
const UNRESOLVED_CODES = new Set(['ENOTFOUND', 'EAI_AGAIN', 'EAI_NONAME', 'EAI_FAIL', 'ENODATA']);

/** Raised from inside the connection when the resolved address is not public. */
class NonPublicTargetError extends Error {
  readonly code = 'ERR_NON_PUBLIC_TARGET';
}

/** How an attempt went, as `webhook_deliveries` records it. */
export interface PostOutcome {
  ok: boolean;
  statusCode: number | null;
  error: string | null;
}

/** How a {@link WebhookClient} connects. */
export interface WebhookClientOptions {
  /** Each attempt's deadline, lookup, connect, TLS, headers and body included. */
  timeoutMs: number;
  allowPrivate: boolean;
  /** dns.lookup-compatible resolver; `lookupHost` (c-ares, bounded) by default. */
  lookup?: LookupFunction | undefined;
  /**
   * Sockets one origin's pool keeps, at most (SOCKETS_PER_ORIGIN by default): no fewer than the
   * caller's attempts to one origin at once, or they wait for a socket within their deadline.
   */
  socketsPerOrigin?: number | undefined;
}

/**
 * Sends webhook POSTs over kept-alive connections pooled per origin. One per dispatcher (its
 * configuration and resolver), closed when the dispatcher stops.
 */
export class WebhookClient {
  readonly #agent: Agent;
  readonly #options: WebhookClientOptions;

  constructor(options: WebhookClientOptions) {
    this.#options = options;
    const lookup = timedLookup(options.lookup ?? lookupHost, options.timeoutMs);
    this.#agent = new Agent({
      connections: options.socketsPerOrigin ?? SOCKETS_PER_ORIGIN,
      keepAliveTimeout: KEEP_ALIVE_MS,
      keepAliveMaxTimeout: KEEP_ALIVE_MS,
      connect: { lookup: options.allowPrivate ? lookup : publicOnly(lookup), timeout: options.timeoutMs },
    });
  }

  /**
   * POSTs `body` to `url` and reports the outcome: 2xx within the deadline is success; redirects are
   * not followed (a 3xx is a failure like any other status). Never throws for anything the
   * endpoint, DNS or the network does.
   */
  async post(url: string, headers: Record<string, string>, body: string): Promise<PostOutcome> {
    const { allowPrivate, timeoutMs } = this.#options;
    let literal: string | undefined;
    try {
      literal = ipLiteralHost(url);
    } catch {
      return { ok: false, statusCode: null, error: 'the endpoint URL is invalid' };
    }
    if (!allowPrivate && literal !== undefined && isNonPublicAddress(literal))
      return { ok: false, statusCode: null, error: NON_PUBLIC_TARGET };
    const deadline = new Deadline(timeoutMs);
    const { signal } = deadline;
    try {
      const sending = request(url, { method: 'POST', headers, body, signal, dispatcher: this.#agent });
      const response = await Promise.race([sending, deadline.passed]);
      await response.body.dump({ limit: MAX_RESPONSE_BODY_BYTES, signal }).catch(() => undefined);
      const { statusCode } = response;
      if (statusCode >= 200 && statusCode < 300) return { ok: true, statusCode, error: null };
      return { ok: false, statusCode, error: `the endpoint answered ${statusCode}` };
    } catch (err) {
      const error = describeFailure(err, signal, timeoutMs);
      const told = error === UNRESOLVED_TARGET && !allowPrivate ? NON_PUBLIC_TARGET : error;
      return { ok: false, statusCode: null, error: told };
    } finally {
      deadline.clear();
    }
  }

  /** Closes every pooled socket; requests still in flight fail. */
  async close(): Promise<void> {
    await this.#agent.destroy().catch(() => undefined);
  }
}

/** One POST on a client of its own, closed afterwards: nothing of it outlives the call. */
export async function postWebhook(
  url: string,
  headers: Record<string, string>,
  body: string,
  options: WebhookClientOptions,
): Promise<PostOutcome> {
  const client = new WebhookClient(options);
  try {
    return await client.post(url, headers, body);
  } finally {
    await client.close();
  }
}

/** A lookup that passes on only public answers; any non-public address refuses the whole name. */
function publicOnly(lookup: LookupFunction): LookupFunction {
  return (hostname, options, callback) => {
    lookup(hostname, options, (err, address, family) => {
      if (err) return callback(err, address, family);
      const all = Array.isArray(address) ? address.map((a: LookupAddress) => a.address) : [address];
      if (!all.length || all.some(isNonPublicAddress))
        return callback(new NonPublicTargetError(`${hostname} resolves to a non-public address`), '', 0);
      callback(null, address, family);
    });
  };
}

/**
 * A lookup that answers within `timeoutMs` whether or not the resolver ever does (an injected one
 * may not): a socket waiting on it would otherwise hold its pool's slot for good.
 */
function timedLookup(lookup: LookupFunction, timeoutMs: number): LookupFunction {
  return (hostname: string, options: LookupOptions, callback) => {
    let settled = false;
    const settle: typeof callback = (err, address, family) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      callback(err, address, family);
    };
    const timer = setTimeout(() => {
      const err = Object.assign(new Error(`lookup of ${hostname} timed out`), { code: 'EAI_AGAIN' });
      settle(err, '', 0);
    }, timeoutMs);
    try {
      lookup(hostname, options, settle);
    } catch (err) {
      settle(err as NodeJS.ErrnoException, '', 0);
    }
  };
}

/**
 * One attempt's deadline: once `ms` have passed, `signal` aborts and `passed` rejects (the attempt
 * races it: the request's own abort may wait for a connect to settle). `clear()`, once the attempt
 * has ended, stops the timer, the one thing that holds the deadline. AbortSignal.timeout() cannot be
 * cleared: its timer kept the signal for the whole deadline after every attempt, and through a
 * listener on it the race's promise and the endpoint's response with it: about 4 KiB an attempt for
 * WEBHOOK_TIMEOUT_MS (10 s): at the ~1,600 attempts/s of the shared harness's `fanout` burst, ~64 MB.
 */
class Deadline {
  readonly signal: AbortSignal;
  readonly passed: Promise<never>;
  readonly #timer: NodeJS.Timeout;

  constructor(ms: number) {
    const controller = new AbortController();
    this.signal = controller.signal;
    const { promise, reject } = Promise.withResolvers<never>();
    this.passed = promise;
    this.#timer = setTimeout(() => {
      const reason = new DOMException('The operation was aborted due to timeout', 'TimeoutError');
      controller.abort(reason);
      reject(reason);
    }, ms);
    // As AbortSignal.timeout's: an attempt in flight keeps the process alive, its deadline does not.
    this.#timer.unref();
  }

  clear(): void {
    clearTimeout(this.#timer);
  }
}

/** A short, stable description of why an attempt failed, for `last_error`. */
function describeFailure(err: unknown, signal: AbortSignal, timeoutMs: number): string {
  if (signal.aborted) return `no answer within ${timeoutMs} ms`;
  if (err instanceof NonPublicTargetError) return NON_PUBLIC_TARGET;
  const e = err as { code?: string; message?: string; cause?: { code?: string } };
  const code = e.code ?? e.cause?.code;
  if (code && UNRESOLVED_CODES.has(code)) return UNRESOLVED_TARGET;
  if (code) return `connection failed: ${code}`;
  return `request failed: ${e.message ?? 'unknown error'}`;
}
