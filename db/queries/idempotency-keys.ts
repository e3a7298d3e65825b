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

/**
 * Claims a key for this transaction (`claim_idempotency_key()`, the claim the hold and confirm
 * functions make too): undefined when this call claimed it, else the key's record. When another
 * transaction holds the same key uncommitted, this waits for it (the unique index does), so a
 * concurrent retry replays the first attempt's committed result instead of running the effect again.
 */
export async function claim(
  trx: Knex,
  record: { partnerId: string; key: string; operation: string; fingerprint: string },
): Promise<IdempotencyRow | undefined> {
  const { rows } = await trx.raw<{ rows: (IdempotencyRow | { key: null })[] }>(
    'select * from claim_idempotency_key(?, ?, ?, ?)',
    [record.partnerId, record.key, record.operation, record.fingerprint],
  );
  const used = rows[0];
  return used && used.key !== null ? used : undefined;
}

/**
 * Stores the result of the write that claimed the key, as data. (status_code, written by releases
 * long gone, is no longer read: a replay answers with its route's status.)
 */
export async function complete(trx: Knex, partnerId: string, key: string, result: unknown): Promise<void> {
  await trx('idempotency_keys')
    .where({ partner_id: partnerId, key })
    .update({ result: JSON.stringify(result) });
}
