/**
 * Idempotent writes. The key is taken in the transaction of the effect, first: a retry either
 * replays the committed result or waits for the attempt in flight and then replays it; it never
 * runs the effect twice, and a failed attempt (its transaction rolled back) leaves the key unused.
 * Keys are scoped per partner across all operations (CONTRACT.md).
 *
 * What a key stores is the write's result as data (`result`: the hold, the booking, the purchase
 * as they were written), whether the write ran in TypeScript (`withIdempotency`) or in a database
 * function (`place_hold()`, `confirm_hold()`). A replay revives that data, and the route presents
 * it as it presented the original, with the route's own status: so a use case returns domain
 * results and never presents. Keys written by a release that stored the presented answer instead
 * (`response`) are replayed as that answer (a `StoredAnswer`) until they age out (RETENTION_DAYS).
 */
import { createHash } from 'node:crypto';
import type { Knex } from '../db/postgres/knex.ts';
import type { DatabaseWrite } from '../db/queries/database-write.ts';
import * as idempotencyKeys from '../db/queries/idempotency-keys.ts';
import { IdempotencyKeyMismatchError } from './errors.ts';

/** A keyed write: who, with which key, which operation, and the logical request it stands for. */
export interface IdempotentWrite {
  partnerId: string;
  key: string;
  operation:
    | 'hold'
    | 'confirm'
    | 'hold_release'
    | 'booking_cancel'
    | 'booking_refund'
    | 'package_purchase'
    | 'hold_group'
    | 'hold_group_confirm'
    | 'hold_group_release'
    | 'series'
    | 'series_cancel'
    | 'series_refund';
  /** What makes two requests "the same logical request" (see `fingerprint()`). */
  request: unknown;
  /**
   * How the release before this one printed the same request, for the new writes, whose print was
   * then their parsed body without its key, and is now their body as sent (`sentRequest()`): a key
   * that release stored still replays for its request until it ages out (RETENTION_DAYS). The two
   * prints never meet by chance: a body as sent always has its key, an earlier print never.
   */
  earlierRequest?: unknown;
  /**
   * Holds replay the original hold for any body under the same key (the spec's rule 3): between two
   * v1 holds only, since a key's operation is compared first.
   */
  replayAnyRequest?: boolean;
}

/** The answer a key of an earlier release stored, already presented: replayed as it is. */
export class StoredAnswer {
  readonly body: unknown;
  constructor(body: unknown) {
    this.body = body;
  }
}

/** What a keyed write comes to: its result (new, or revived from its key), or a StoredAnswer. */
export type WriteOutcome<T> = T | StoredAnswer;

/** The body to answer with: `present(result)`, or a stored answer as it is. */
export function presented<T, R>(outcome: WriteOutcome<T>, present: (result: T) => R): unknown {
  return outcome instanceof StoredAnswer ? outcome.body : present(outcome);
}

/**
 * Runs `effect` once per key, inside `trx`, storing its result; or, for a key already used by the
 * same write, the result stored for it (`revive` makes it from its JSON).
 */
export async function withIdempotency<T>(
  trx: Knex.Transaction,
  write: IdempotentWrite,
  effect: () => Promise<T>,
  revive: (json: Record<string, unknown>) => T,
): Promise<WriteOutcome<T>> {
  const print = fingerprint(write.request);
  const record = await idempotencyKeys.lock(trx, write);
  if (record) {
    assertSameWrite(record, write, print);
    return record.result === null ? new StoredAnswer(record.response) : revive(record.result);
  }
  const result = await effect();
  await idempotencyKeys.store(trx, { ...write, fingerprint: print }, result);
  return result;
}

/**
 * What a keyed write made in one database function comes to (its result revived, or a stored
 * answer), or, for a key used for another operation or request, IDEMPOTENCY_KEY_MISMATCH: checked
 * before the result is revived, since a key of another operation stored another shape.
 * `write.request` is what the database was given as its print.
 */
export function databaseWriteOutcome<T>(
  outcome: DatabaseWrite,
  write: IdempotentWrite,
  revive: (json: Record<string, unknown>) => T,
): WriteOutcome<T> {
  if (outcome.replayed) {
    assertSameWrite(outcome as { operation: string; fingerprint: string }, write, fingerprint(write.request));
    if (outcome.result === null) return new StoredAnswer(outcome.response);
  }
  return revive(outcome.result!);
}

/** Throws unless a key's record was made by the same operation (and request, where that matters). */
function assertSameWrite(
  record: { operation: string; fingerprint: string },
  write: IdempotentWrite,
  print: string,
): void {
  if (record.operation !== write.operation) {
    throw new IdempotencyKeyMismatchError('This idempotency_key was already used for another operation.');
  }
  if (
    !write.replayAnyRequest &&
    record.fingerprint !== print &&
    !(write.earlierRequest !== undefined && record.fingerprint === fingerprint(write.earlierRequest))
  ) {
    throw new IdempotencyKeyMismatchError('This idempotency_key was already used for a different request.');
  }
}

/**
 * What a new write (hold-group create, confirm and release; series create, cancel and refund)
 * compares under its key: its body as sent (`sent`, RouteInput's), beside the path's id when it has
 * one; and, as `earlierRequest`, the same request as the release before printed it, from the parsed
 * body without its key.
 */
export function sentRequest(
  sent: unknown,
  parsed: { idempotency_key: string },
  path?: Record<string, string>,
): Pick<IdempotentWrite, 'request' | 'earlierRequest'> {
  const { idempotency_key: _key, ...earlier } = parsed;
  return path
    ? { request: { ...path, body: sent }, earlierRequest: { ...path, body: earlier } }
    : { request: sent, earlierRequest: earlier };
}

/** A stable hash of a request: the same fields and values give the same print, in any key order. */
export function fingerprint(request: unknown): string {
  return createHash('sha256').update(canonicalJson(request)).digest('hex');
}

/**
 * JSON with object members sorted by name and undefined members left out, written without
 * recursion: an explicit stack of what is still to write, so no nesting depth a 64 KiB body can
 * reach overflows the call stack (CONTRACT.md, "Ignored members": never a 500 from a body's shape).
 */
export function canonicalJson(root: unknown): string {
  const out: string[] = [];
  // Either a value still to write, or a piece of punctuation ({ token }) already decided.
  const todo: ({ token: string } | { value: unknown })[] = [{ value: root }];
  while (todo.length) {
    const next = todo.pop()!;
    if ('token' in next) {
      out.push(next.token);
      continue;
    }
    const value = next.value instanceof Date ? next.value.toISOString() : next.value;
    if (Array.isArray(value)) {
      // Pushed in reverse, so they pop in order: [ v0 , v1 … ]
      todo.push({ token: ']' });
      for (let i = value.length - 1; i >= 0; i--) {
        todo.push({ value: value[i] === undefined ? null : value[i] });
        if (i > 0) todo.push({ token: ',' });
      }
      out.push('[');
    } else if (value !== null && typeof value === 'object') {
      const entries = Object.entries(value as Record<string, unknown>)
        .filter(([, v]) => v !== undefined)
        .sort(([a], [b]) => (a < b ? -1 : 1));
      todo.push({ token: '}' });
      for (let i = entries.length - 1; i >= 0; i--) {
        const [name, member] = entries[i]!;
        todo.push({ value: member }, { token: `${JSON.stringify(name)}:` });
        if (i > 0) todo.push({ token: ',' });
      }
      out.push('{');
    } else {
      out.push(JSON.stringify(value) ?? 'null');
    }
  }
  return out.join('');
}

/**
 * A body as the client sent it, for the new writes' comparison (CONTRACT.md: the same key replays
 * only for a body equal as JSON, member order aside): the members the API names — those validation
 * kept, at every depth — each with its value as sent, before any default or normalisation (a phone
 * written another way, an instant with another offset, a default written out make another body).
 * Ignored members (`partner_id`, members nobody names) are left out whatever they hold, as they
 * change nothing a request does (CONTRACT.md, "Ignored members"). `parsed` is validation's output,
 * a few levels deep, so walking it cannot overflow however deep the sent body nests.
 */
export function namedAsSent(sent: unknown, parsed: unknown): unknown {
  if (Array.isArray(sent) && Array.isArray(parsed)) {
    return sent.map((member, i) => namedAsSent(member, parsed[i]));
  }
  if (isPlainObject(sent) && isPlainObject(parsed)) {
    const named: Record<string, unknown> = {};
    for (const [name, value] of Object.entries(parsed)) {
      if (value !== undefined && Object.hasOwn(sent, name)) named[name] = namedAsSent(sent[name], value);
    }
    return named;
  }
  return sent;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value) && !(value instanceof Date);
}
