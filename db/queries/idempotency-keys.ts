/** Queries on `idempotency_keys`, the durable record of each keyed write's result. */
import type { Knex } from '../postgres/knex.ts';

/** A row of `idempotency_keys`. */
export interface IdempotencyRow {
  partner_id: string;
  key: string;
  operation: string;
  fingerprint: string;
  status_code: number | null;
  response: unknown;
}

/**
 * Claims a key for this transaction: true when this call inserted it. When another transaction
 * holds the same key uncommitted, this waits for it (the unique index does), so a concurrent retry
 * replays the first attempt's committed result instead of running the effect again.
 */
export async function claim(
  trx: Knex,
  record: { partnerId: string; key: string; operation: string; fingerprint: string },
): Promise<boolean> {
  const rows = await trx('idempotency_keys')
    .insert({
      partner_id: record.partnerId,
      key: record.key,
      operation: record.operation,
      fingerprint: record.fingerprint,
    })
    .onConflict(['partner_id', 'key'])
    .ignore()
    .returning('key');
  return rows.length > 0;
}

/** The record of a key. */
export async function find(trx: Knex, partnerId: string, key: string): Promise<IdempotencyRow | undefined> {
  return trx<IdempotencyRow>('idempotency_keys').where({ partner_id: partnerId, key }).first();
}

/**
 * Stores the result of the write that claimed the key. (status_code, written by earlier versions,
 * is no longer: a replay answers with its route's status.)
 */
export async function complete(trx: Knex, partnerId: string, key: string, response: unknown): Promise<void> {
  await trx('idempotency_keys')
    .where({ partner_id: partnerId, key })
    .update({ response: JSON.stringify(response) });
}
