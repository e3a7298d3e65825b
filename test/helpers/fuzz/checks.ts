/**
 * What every answer of the fuzz must be, whatever the request: no 5xx; a status documented for the
 * operation and a body matching its schema (`openapi.ts`); the X-Request-Id echoed; an error body
 * with `error`, `message` and `request_id`, and a VALIDATION_ERROR whose `details` name fields the
 * operation declares where it declares them; the rate-limit headers for a valid key, 401 without a
 * usable one; nothing changed by a 4xx; and no 2xx for a request that must be refused
 * (`refusals.ts`). Each problem is a violation with a kind, so that equal failures group.
 */
import { refusals } from './refusals.ts';
import { excerpt, type FuzzRequest } from './request.ts';
import type { CallResult } from '../http.ts';
import type { OpenApiDocument, Operation } from './openapi-operations.ts';
import { responseProblems } from '../openapi.ts';

/** One thing wrong with an answer: its kind (`5xx`, `auth`, `changed-on-4xx`…) and what was seen. */
export interface Violation {
  kind: string;
  detail: string;
}

const RATE_LIMIT_HEADERS = ['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset-Ms'];
const DETAIL_LOCATIONS = new Set(['body', 'query', 'path', 'header']);
/** X-Request-Id values we echo (CONTRACT.md). */
const SAFE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * What is wrong with `res` as the answer to `request` in `document`, given the tables the request
 * changed (`changed`) and the X-Request-Id it sent, if any.
 */
export function judge(
  document: OpenApiDocument,
  request: FuzzRequest,
  requestId: string | undefined,
  res: CallResult,
  changed: string[],
): Violation[] {
  const op = request.operation;
  const out: Violation[] = [];
  const add = (kind: string, detail: string) => out.push({ kind, detail });
  if (res.status >= 500) add('5xx', `${res.status} ${res.body?.error ?? excerpt(res.text, 80)}`);
  for (const problem of responseProblems(document, `${op.method} ${op.path}`, res)) {
    add(
      problem.includes('does not document status') ? 'undocumented-status' : 'body-not-as-documented',
      problem,
    );
  }
  out.push(...requestIdProblems(requestId, res));
  if (res.status >= 400) out.push(...errorBodyProblems(op, res));
  out.push(...keyProblems(request, res));
  if (res.status >= 400 && res.status < 500 && changed.length) {
    add('changed-on-4xx', `${res.status} ${res.body?.error ?? ''} changed ${changed.join(', ')}`);
  }
  if (res.status >= 200 && res.status < 300) {
    const reasons = refusals(document, request);
    if (reasons.length)
      add('accepted-invalid', `${res.status} for a request to refuse: ${reasons.join('; ')}`);
  }
  return out;
}

/** The X-Request-Id is always sent back, and is the one the request sent when that one is safe. */
function requestIdProblems(requestId: string | undefined, res: CallResult): Violation[] {
  const echoed = res.headers.get('x-request-id');
  if (!echoed) return [{ kind: 'request-id', detail: 'no X-Request-Id header' }];
  // A 431 is answered before the headers were read (they did not fit), so it cannot echo one: it
  // makes an id of its own, which is all a client gets back for it.
  if (res.status === 431) return [];
  if (requestId !== undefined && SAFE_REQUEST_ID.test(requestId) && echoed !== requestId) {
    return [{ kind: 'request-id', detail: `X-Request-Id ${requestId} not echoed (got ${echoed})` }];
  }
  return [];
}

/** A secured operation: rate-limit headers for a usable key, 401 without one. */
function keyProblems(request: FuzzRequest, res: CallResult): Violation[] {
  const op = request.operation;
  const out: Violation[] = [];
  const add = (kind: string, detail: string) => out.push({ kind, detail });
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
  return out;
}

/** Names an operation declares, by location (body: its top-level properties). */
function declaredNames(op: Operation): Record<string, Set<string>> {
  const names: Record<string, Set<string>> = { path: new Set(), query: new Set(), body: new Set() };
  for (const p of op.parameters) names[p.in]!.add(p.name);
  for (const name of Object.keys(op.body?.properties ?? {})) names.body!.add(name);
  return names;
}

/** An error body has `error`, `message` and the `request_id` of the header; see also its details. */
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
  return [...out, ...validationDetailProblems(op, body.details)];
}

/** A VALIDATION_ERROR's details: `{field, message, in}` entries naming inputs where they are declared. */
function validationDetailProblems(op: Operation, details: any): Violation[] {
  if (!Array.isArray(details) || details.length === 0) {
    return [{ kind: 'validation-details', detail: 'VALIDATION_ERROR without details' }];
  }
  const out: Violation[] = [];
  const declared = declaredNames(op);
  for (const d of details) {
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
