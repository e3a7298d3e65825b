/**
 * The HTTP client of webhook attempts: one signed POST, under one deadline, to the address that was
 * checked. `fetch` resolved the endpoint's name again after our check, so a name answering a public
 * address first and 127.0.0.1 next (DNS rebinding) got a signed POST into the private network. Here
 * the check runs inside the connection: undici hands its Agent's `connect` options to
 * `net.connect`/`tls.connect` (undici `lib/core/connect.js`, `buildConnector`), so our `lookup`
 * is the resolver of the very socket that is dialled, and it refuses any non-public answer. Node
 * skips `lookup` for an IP-literal host, so those are checked before anything is sent.
 *
 * The default resolver is `lookupHost` (db/platform/host-resolver.ts): DNS through c-ares, on the event loop,
 * failing a name whose DNS never answers within HOST_LOOKUP_TIMEOUT_MS (3 s). node:dns `lookup` is
 * getaddrinfo on libuv's 4-thread pool, so a partner whose DNS never answered held a thread per
 * attempt for as long as the system resolver tried, and a handful of attempts stalled every other
 * partner's lookups and the worker's file writes.
 *
 * One AbortSignal bounds the whole request: lookup, connect, TLS, headers and body. A lookup that
 * never calls back (an injected one may not) is cut off by it. undici alone does not
 * do this: an abort before the socket connects only takes effect once the connect settles. Measured
 * with undici 7.30, a hanging lookup held a 300 ms request for 986 ms (until undici's own connect
 * timer, which ticks in half-seconds); with the lookup bound to the signal it ended at 301 ms.
 * Each attempt gets its own Agent, destroyed afterwards, so no socket of an attempt outlives it and
 * nothing is pooled across attempts.
 */
import type { LookupAddress, LookupOptions } from 'node:dns';
import type { LookupFunction } from 'node:net';
import { Agent, request } from 'undici';
import { lookupHost } from '../db/platform/host-resolver.ts';
import { ipLiteralHost, isNonPublicAddress } from '../db/rules/webhook-targets.ts';

/** The most response body read (and thrown away) before the connection is dropped. */
const MAX_RESPONSE_BODY_BYTES = 64 * 1024;

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

/** What a POST needs besides the request itself. */
export interface PostOptions {
  timeoutMs: number;
  allowPrivate: boolean;
  /** dns.lookup-compatible resolver; `lookupHost` (c-ares, bounded) by default. */
  lookup?: LookupFunction | undefined;
}

/**
 * POSTs `body` to `url` and reports the outcome: 2xx within `timeoutMs` is success; redirects are
 * not followed (a 3xx is a failure like any other status). Never throws for anything the endpoint,
 * DNS or the network does.
 */
export async function postWebhook(
  url: string,
  headers: Record<string, string>,
  body: string,
  options: PostOptions,
): Promise<PostOutcome> {
  let literal: string | undefined;
  try {
    literal = ipLiteralHost(url);
  } catch {
    return { ok: false, statusCode: null, error: 'the endpoint URL is invalid' };
  }
  if (!options.allowPrivate && literal !== undefined && isNonPublicAddress(literal))
    return { ok: false, statusCode: null, error: NON_PUBLIC_TARGET };
  const signal = AbortSignal.timeout(options.timeoutMs);
  const lookup = options.lookup ?? lookupHost;
  const agent = new Agent({
    connect: {
      lookup: boundedLookup(options.allowPrivate ? lookup : publicOnly(lookup), signal),
      timeout: options.timeoutMs,
    },
  });
  try {
    const sending = request(url, { method: 'POST', headers, body, signal, dispatcher: agent });
    const response = await Promise.race([sending, rejectOnAbort(signal)]);
    await response.body.dump({ limit: MAX_RESPONSE_BODY_BYTES, signal }).catch(() => undefined);
    const { statusCode } = response;
    if (statusCode >= 200 && statusCode < 300) return { ok: true, statusCode, error: null };
    return { ok: false, statusCode, error: `the endpoint answered ${statusCode}` };
  } catch (err) {
    const error = describeFailure(err, signal, options.timeoutMs);
    const told = error === UNRESOLVED_TARGET && !options.allowPrivate ? NON_PUBLIC_TARGET : error;
    return { ok: false, statusCode: null, error: told };
  } finally {
    await agent.destroy().catch(() => undefined);
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

/** A lookup that answers no later than `signal` aborts, whether or not the resolver ever does. */
function boundedLookup(lookup: LookupFunction, signal: AbortSignal): LookupFunction {
  return (hostname: string, options: LookupOptions, callback) => {
    let settled = false;
    const settle: typeof callback = (err, address, family) => {
      if (settled) return;
      settled = true;
      signal.removeEventListener('abort', onAbort);
      callback(err, address, family);
    };
    const onAbort = () => settle(signal.reason as NodeJS.ErrnoException, '', 0);
    if (signal.aborted) return onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    try {
      lookup(hostname, options, settle);
    } catch (err) {
      settle(err as NodeJS.ErrnoException, '', 0);
    }
  };
}

/** Rejects when `signal` aborts: the request's own abort may wait for a connect to settle. */
function rejectOnAbort(signal: AbortSignal): Promise<never> {
  return new Promise((_, reject) => {
    const abort = () => reject(signal.reason as Error);
    if (signal.aborted) abort();
    else signal.addEventListener('abort', abort, { once: true });
  });
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
