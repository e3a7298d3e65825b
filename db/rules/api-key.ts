/**
 * API keys: 64 lower-case hex characters (256 random bits), shown once and stored only as a
 * SHA-256 hash. A key this long cannot be guessed, so a fast hash is the right one: it keeps the
 * per-request lookup a single indexed equality.
 */
import { createHash, randomBytes } from 'node:crypto';

/** A new random API key. */
export function generateApiKey(): string {
  return randomBytes(32).toString('hex');
}

/** The stored form of an API key. */
export function hashApiKey(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}
