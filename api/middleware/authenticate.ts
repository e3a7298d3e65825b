import type { Knex } from '../../db/postgres/knex.ts';
import { hashApiKey } from '../../db/rules/api-key.ts';
import { KeyAuthenticator } from '../../db/queries/key-authenticator.ts';
import type { AppMiddleware } from '../context.ts';
import { UnauthenticatedError } from '../errors.ts';

/** Keys are 64 hex characters; anything else cannot be a key and skips the database. */
const KEY_SHAPE = /^[0-9a-fA-F]{64}$/;

/**
 * Resolves `x-api-key` to its partner (401 for anything else, with no hint why). The same round
 * trip takes the request's rate-limit token, which `rateLimit()` then enforces; requests of one key
 * that arrive together share that round trip (`KeyAuthenticator`).
 */
export function authenticate(db: Knex): AppMiddleware {
  const keys = new KeyAuthenticator(db);
  return async function authenticate(ctx, next) {
    // A keyed answer is one partner's: no cache between us and them may keep it (the key is not
    // `Authorization`, which would keep shared caches off by itself). The stream says its own.
    ctx.set('Cache-Control', 'no-store');
    const key = ctx.get('x-api-key');
    const auth = KEY_SHAPE.test(key) ? await keys.authenticate(hashApiKey(key.toLowerCase())) : undefined;
    if (!auth) throw new UnauthenticatedError();
    // From here on, state.log carries the partner (request-id.ts).
    ctx.state.auth = auth;
    await next();
  };
}
