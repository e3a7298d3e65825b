import type { Metrics } from '../../db/platform/metrics.ts';
import type { AppMiddleware } from '../context.ts';
import { RateLimitExceededError } from '../errors.ts';

/**
 * Enforces the verdict `authenticate()` took from the key's sliding window (60 requests per 60 s
 * by default, exact, shared by every web process through PostgreSQL): rate-limit headers on every
 * keyed response, 429 with Retry-After once the window is full: when a request would be admitted
 * again.
 */
export function rateLimit(metrics: Metrics): AppMiddleware {
  return async function rateLimit(ctx, next) {
    const auth = ctx.state.auth;
    if (!auth) {
      await next();
      return;
    }
    ctx.set('X-RateLimit-Limit', String(auth.limit));
    ctx.set('X-RateLimit-Remaining', String(auth.remaining));
    ctx.set('X-RateLimit-Reset-Ms', String(auth.resetMs));
    if (!auth.allowed) {
      metrics.rateLimitRefusals.inc();
      throw new RateLimitExceededError(Math.max(1, Math.ceil(auth.retryMs / 1000)));
    }
    await next();
  };
}
