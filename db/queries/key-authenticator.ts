/**
 * Authenticates requests a key at a time: while a key's statement runs, the requests of that key
 * that arrive wait for it, then go to the database together as the next statement, each with its
 * own verdict in arrival order (`authenticateMany()`).
 *
 * Why: every keyed request takes a token from its key's window, and the window's row is locked
 * from the token to the commit. A partner sending 16 requests at a time made 16 backends queue on
 * that one row, each handing the lock to the next through a wake-up on two busy cores; a quarter
 * of the busy backends were waiting on it, and the machine sat partly idle while requests queued.
 * Batched, a web process keeps at most one statement per key in flight, so the row sees at most
 * one locker per web process, and a busy key costs one round trip per batch instead of per
 * request. A single request meets no wait: with nothing in flight for its key it is sent at once.
 */
import { AsyncResource } from 'node:async_hooks';
import type { Knex } from '../postgres/knex.ts';
import { authenticateMany, type AuthenticatedRequest } from './api-keys.ts';

/** Requests of one statement at most; the rest wait for the next. */
const MAX_BATCH = 100;

interface Waiter {
  resolve(verdict: AuthenticatedRequest | undefined): void;
  reject(err: unknown): void;
  /** Runs a function in the request's own async context (its trace, its request id), so that the
   * statement of a batch it leads is the request's and not that of the batch before. */
  inContext<R>(fn: () => R): R;
}

export class KeyAuthenticator {
  /** Per key hash with a statement in flight, the requests waiting for the next one. */
  readonly #waiting = new Map<string, Waiter[]>();
  readonly #db: Knex;

  constructor(db: Knex) {
    this.#db = db;
  }

  /** The partner and rate-limit verdict of one request; undefined for a key that does not work. */
  authenticate(keyHash: string): Promise<AuthenticatedRequest | undefined> {
    return new Promise((resolve, reject) => {
      const waiting = this.#waiting.get(keyHash);
      if (waiting) {
        const resource = new AsyncResource('KeyAuthenticator');
        waiting.push({ resolve, reject, inContext: (fn) => resource.runInAsyncScope(fn) });
      } else {
        this.#waiting.set(keyHash, []);
        void this.#send(keyHash, [{ resolve, reject, inContext: (fn) => fn() }]);
      }
    });
  }

  async #send(keyHash: string, batch: Waiter[]): Promise<void> {
    try {
      const verdicts = await authenticateMany(this.#db, keyHash, batch.length);
      batch.forEach((waiter, i) => waiter.resolve(verdicts?.[i]));
    } catch (err) {
      for (const waiter of batch) waiter.reject(err);
    }
    const waiting = this.#waiting.get(keyHash)!;
    if (waiting.length === 0) {
      this.#waiting.delete(keyHash);
      return;
    }
    const next = waiting.splice(0, MAX_BATCH);
    next[0]!.inContext(() => void this.#send(keyHash, next));
  }
}
