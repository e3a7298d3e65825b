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
  let response: CallResult;
  try {
    response = await rawCall(fx.server, raw);
  } catch (err) {
    const violation = { kind: 'no-answer', detail: (err as Error).message };
    const empty = { status: 0, headers: new Headers(), body: undefined, text: '' };
    return { request, requestId, raw, response: empty, violations: [violation] };
  }
  const changed = changedTables(before, await fx.digest.read());
  grow(fx.world.pools, request.operation, response);
  const violations = judge(fx.document, request, requestId, response, changed);
  return { request, requestId, raw, response, violations };
}
