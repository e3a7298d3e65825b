/**
 * Idempotent writes. The key is claimed in the transaction of the effect, first: a retry either
 * replays the committed result or waits for the attempt in flight and then replays it; it never
 * runs the effect twice, and a failed attempt (its transaction rolled back) leaves the key unused.
 * Keys are scoped per partner across all operations (CONTRACT.md).
 *
 * What is stored, and replayed, is the result exactly as the client first got it: a write's result
 * is its presentation, so the use case presents it (with the presenter its route hands it) inside
 * the transaction. The status belongs to the route, which answers a replay as it answered the
 * original (only writes that succeeded store a result: a failed one rolls its key back).
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
  operation: 'hold' | 'confirm' | 'hold_release' | 'booking_cancel' | 'booking_refund' | 'package_purchase';
  /** What makes two requests "the same logical request" (see `fingerprint()`). */
  request: unknown;
  /** Holds replay the original hold for any body under the same key (the spec's rule 3). */
  replayAnyRequest?: boolean;
}

/** Runs `effect` once per key, inside `trx`, or replays the result stored for the key. */
export async function withIdempotency<R>(
  trx: Knex.Transaction,
  write: IdempotentWrite,
  effect: () => Promise<R>,
): Promise<R> {
  const print = fingerprint(write.request);
  const record = await idempotencyKeys.claim(trx, { ...write, fingerprint: print });
  if (record) {
    assertSameWrite(record, write, print);
    return record.response as R;
  }
  const result = await effect();
  await idempotencyKeys.complete(trx, write.partnerId, write.key, result);
  return result;
}

/**
 * The answer to a keyed write made in the database: `present(result)` — the first time and on every
 * replay alike, so a replay is the first answer again — or, for a key used for another operation or
 * request, IDEMPOTENCY_KEY_MISMATCH. `write.request` is what the database was given as its print.
 */
export function answerDatabaseWrite<T, R>(
  outcome: DatabaseWrite<T>,
  write: IdempotentWrite,
  present: (result: T) => R,
): R {
  if (outcome.replayed) {
    assertSameWrite(outcome as { operation: string; fingerprint: string }, write, fingerprint(write.request));
    if (outcome.result === null) return outcome.response as R;
  }
  return present(outcome.result!);
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
  if (!write.replayAnyRequest && record.fingerprint !== print) {
    throw new IdempotencyKeyMismatchError('This idempotency_key was already used for a different request.');
  }
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
