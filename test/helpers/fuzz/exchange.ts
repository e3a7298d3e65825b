/**
 * Sending one generated request and judging the answer. The request is written byte for byte
 * (`rawCall`), since fetch would refuse or rewrite much of what the fuzz sends: U+0000 in a header,
 * a repeated header, malformed percent-escapes. It runs between two reads of the database digest,
 * one request at a time, so that a change is attributable to it.
 */
import { changedTables } from './database-digest.ts';
import { judge, type Violation } from './checks.ts';
import type { FuzzFixture } from './fixture.ts';
import { grow } from './pools.ts';
import { bodyText, type FuzzRequest } from './request.ts';
import { API_PREFIX } from './world-records.ts';
import type { World } from './world.ts';
import { rawCall, type CallResult, type RawRequest } from '../http.ts';
import { VALIDATION_GAP } from '../../../api/middleware/errors.ts';

/** A request as generated and as sent, its answer, and what is wrong with the answer. */
export interface Exchange {
  request: FuzzRequest;
  requestId: string | undefined;
  raw: RawRequest;
  response: CallResult;
  violations: Violation[];
}

/** The request on the wire: its credential as `x-api-key` headers, its X-Request-Id, its body. */
function toRaw(request: FuzzRequest, requestId: string | undefined, world: World): RawRequest {
  const headers: [string, string][] = [];
  for (const key of apiKeyHeaders(request, world)) headers.push(['x-api-key', key]);
  if (requestId !== undefined) headers.push(['x-request-id', requestId]);
  if (request.header) headers.push([request.header[0], request.header[1]]);
  const body = bodyText(request.body);
  if (request.body.kind !== 'none' && request.body.contentType)
    headers.push(['content-type', request.body.contentType]);
  const target = `${API_PREFIX}${request.path}${request.query ? `?${request.query}` : ''}`;
  return { method: request.operation.method, target, headers, ...(body === undefined ? {} : { body }) };
}

/** The `x-api-key` values the request's credential stands for (none, one, or the key twice). */
function apiKeyHeaders(request: FuzzRequest, { apiKey, otherKey, wrongKey }: World): string[] {
  switch (request.credential) {
    case 'valid':
      return [apiKey];
    case 'other':
      return [otherKey];
    case 'wrong':
      return [wrongKey];
    case 'malformed':
      return ['not-a-key'];
    case 'nul':
      return [`${apiKey.slice(0, 32)}\u0000${apiKey.slice(32)}`];
    case 'twice':
      return [apiKey, apiKey];
    default:
      return [];
  }
}

/** Sends one request between two digests and lists what is wrong with the answer. */
export async function exercise(fx: FuzzFixture, request: FuzzRequest, requestId?: string): Promise<Exchange> {
  const raw = toRaw(request, requestId, fx.world);
  const before = await fx.digest.read();
  const firstLine = fx.logLines.length;
  let response: CallResult;
  try {
    response = await rawCall(fx.server, raw);
  } catch (err) {
    const violation = { kind: 'no-answer', detail: (err as Error).message };
    const empty = { status: 0, headers: new Headers(), body: undefined, text: '' };
    return { request, requestId, raw, response: empty, violations: [violation] };
  }
  let after = await fx.digest.read();
  // An availability stream the fuzz opened and closed (rawCall) frees its row when the service
  // sees the socket close: wait for that, so it is not blamed on the next request.
  if (response.headers.get('content-type')?.startsWith('text/event-stream')) {
    for (let waited = 0; after.get(STREAMS) !== before.get(STREAMS) && waited < 5_000; waited += 20) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      after = await fx.digest.read();
    }
  }
  const changed = changedTables(before, after);
  grow(fx.world.pools, request.operation, response);
  const violations = judge(fx.document, request, requestId, response, changed);
  violations.push(...logProblems(fx.logLines.slice(firstLine), response));
  return { request, requestId, raw, response, violations };
}

/** The table of open availability streams (one row per stream, deleted when it closes). */
const STREAMS = 'availability_streams';

/** pino's level number for `error`: a request answered below 500 logs nothing at it or above. */
const ERROR_LEVEL = 50;

/**
 * What the service logged while it answered (CONTRACT.md, "Error logs"): every line names the
 * request's X-Request-Id, and an answer below 500 comes with no line at level error or above.
 */
function logProblems(lines: Record<string, unknown>[], response: CallResult): Violation[] {
  const out: Violation[] = [];
  const requestId = response.headers.get('x-request-id');
  for (const line of lines) {
    const level = Number(line.level);
    if (level >= ERROR_LEVEL && response.status < 500) {
      out.push({ kind: 'error-log', detail: `${response.status} logged at ${level}: ${String(line.msg)}` });
    }
    // A 400 the database decided is allowed, and logged as a warning; to the fuzzer it is a gap.
    if (line.msg === VALIDATION_GAP) {
      out.push({ kind: 'validation-gap', detail: `${String(line.sqlstate)} on ${String(line.path)}` });
    }
    if (response.status !== 431 && line.request_id !== requestId) {
      out.push({
        kind: 'log-request-id',
        detail: `"${String(line.msg)}" names request ${String(line.request_id)}`,
      });
    }
  }
  return out;
}
