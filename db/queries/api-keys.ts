/** Queries on `api_keys` and the rate-limit window that every keyed request passes through. */
import { insertReturningId, type Knex } from '../postgres/knex.ts';
import { runStatement } from '../postgres/statement.ts';

/** Stores a key hash for a partner and returns the key's id. */
export async function insert(
  db: Knex,
  key: { partnerId: string; keyHash: string; expiresAt: Date | null },
): Promise<string> {
  return insertReturningId(db, 'api_keys', {
    partner_id: key.partnerId,
    key_hash: key.keyHash,
    expires_at: key.expiresAt,
  });
}

/**
 * Revokes every live key of a partner except `keepId` (api_key_is_live(): a key already past its
 * expiry has stopped working and is not counted); returns how many were revoked.
 */
export async function revokeAll(db: Knex, partnerId: string, keepId?: string): Promise<number> {
  const query = db('api_keys').where({ partner_id: partnerId }).whereRaw('api_key_is_live(api_keys)');
  if (keepId) void query.whereNot({ id: keepId });
  return query.update({ revoked_at: db.fn.now() });
}

/**
 * Lets every live key of the partner work `seconds` more (from the end of this statement, so from
 * about when the caller commits), never longer than it already would. Authentication refuses a key
 * past its expires_at.
 */
export async function expireAllWithin(db: Knex, partnerId: string, seconds: number): Promise<number> {
  return db('api_keys')
    .where({ partner_id: partnerId })
    .whereNull('revoked_at')
    .update({
      expires_at: db.raw(
        "least(coalesce(expires_at, 'infinity'), clock_timestamp() + make_interval(secs => ?))",
        [seconds],
      ),
    });
}

/** A keyed request that was authenticated, with the verdict of its rate limit. */
export interface AuthenticatedRequest {
  partnerId: string;
  limit: number;
  allowed: boolean;
  remaining: number;
  /** Until the window's oldest request leaves it (X-RateLimit-Reset-Ms). */
  resetMs: number;
  /** Until a request would be admitted: a refused one's Retry-After (the reset, or later when the
   * window holds more requests than a limit lowered since). */
  retryMs: number;
}

/**
 * Resolves a key hash to its partner and takes a rate-limit token for each of `count` requests of
 * that key, in one statement: one verdict per request, in the order given (a batch of requests is
 * admitted or refused exactly as the same requests one after the other; see
 * `take_rate_limit_tokens()`). Undefined for unknown, revoked or expired keys, which are not
 * counted against any window. `KeyAuthenticator` (key-authenticator.ts) gathers the batches.
 *
 * The statement is its own transaction, and it commits without waiting for its WAL to reach disk
 * (`synchronous_commit` off for this transaction only): every request makes one such commit, and
 * waiting for the flush was a disk sync per request, reads included. A token is visible to every
 * other process at once all the same (the limit stays exact and shared); what a crash of the
 * database can lose is the last fraction of a second of tokens, i.e. a few requests a partner
 * makes beyond its window once, never a booking (those commits stay synchronous).
 */
export async function authenticateMany(
  db: Knex,
  keyHash: string,
  count: number,
): Promise<AuthenticatedRequest[] | undefined> {
  const { rows } = await runStatement<{
    partner_id: string;
    rate_limit: number;
    allowed: boolean;
    remaining: number;
    reset_ms: number;
    retry_ms: number;
  }>(
    db,
    `select k.partner_id, p.rate_limit, t.allowed, t.remaining, t.reset_ms, t.retry_ms
       from api_keys k
       join partners p on p.id = k.partner_id
      cross join lateral take_rate_limit_tokens(k.id, p.rate_limit, ?) with ordinality t
      cross join set_config('synchronous_commit', 'off', true)
      where k.key_hash = ? and api_key_is_live(k)
      order by t.ordinality`,
    [count, keyHash],
  );
  if (rows.length === 0) return undefined;
  return rows.map((row) => ({
    partnerId: row.partner_id,
    limit: row.rate_limit,
    allowed: row.allowed,
    remaining: row.remaining,
    resetMs: row.reset_ms,
    retryMs: row.retry_ms,
  }));
}

/** `authenticateMany()` for one request. */
export async function authenticate(db: Knex, keyHash: string): Promise<AuthenticatedRequest | undefined> {
  return (await authenticateMany(db, keyHash, 1))?.[0];
}
