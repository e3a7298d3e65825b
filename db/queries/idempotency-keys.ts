/** Queries on `idempotency_keys`, the durable record of each keyed write's result. */
import type { Knex } from '../postgres/knex.ts';

/** A row of `idempotency_keys`. */
export interface IdempotencyRow {
  partner_id: string;
  key: string;
  operation: string;
  fingerprint: string;
  /** The write's result as data (what replays revive). */
  result: Record<string, unknown> | null;
  /** What a release before results were kept as data stored: the answer, already presented. */
  response: unknown;
}

/** A keyed write's key and what it stands for. */
export interface KeyedWrite {
  partnerId: string;
  key: string;
  operation: string;
  fingerprint: string;
}

/**
 * Takes a key for this transaction (`lock_idempotency_key()`, as the hold and confirm functions do
 * too): its record when it was used, else undefined, and the write runs and then stores its result
 * (`store()`). When another transaction holds the same key, this waits for it to end (the key's
 * advisory lock), so a concurrent retry replays the first attempt's committed result instead of
 * running the effect again.
 */
export async function lock(
  trx: Knex,
  write: Pick<KeyedWrite, 'partnerId' | 'key'>,
): Promise<IdempotencyRow | undefined> {
  const { rows } = await trx.raw<{ rows: (IdempotencyRow | { key: null })[] }>(
    'select * from lock_idempotency_key(?, ?)',
    [write.partnerId, write.key],
  );
  const used = rows[0];
  return used && used.key !== null ? used : undefined;
}

/**
 * Records the key with the result of the write that found it unused, as data, in its transaction
 * (`store_idempotency_key()`). (status_code, written by releases long gone, is no longer read: a
 * replay answers with its route's status.)
 */
export async function store(trx: Knex, write: KeyedWrite, result: unknown): Promise<void> {
  await trx.raw('select store_idempotency_key(?, ?, ?, ?, ?::jsonb)', [
    write.partnerId,
    write.key,
    write.operation,
    write.fingerprint,
    JSON.stringify(result),
  ]);
}
