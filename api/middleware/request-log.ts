import type { AppMiddleware } from '../context.ts';

/** Health probes: an orchestrator calls them every few seconds; they log at debug unless they fail. */
const PROBES = new Set(['/health', '/health/live', '/health/ready']);

/**
 * Logs one line per request when it ends: method, path, the route template it matched (as the
 * OpenAPI document writes it, `/api/v1/bookings/{bookingId}`, or `unmatched`), status, duration
 * and partner. Probes that succeed log at debug, so they do not flood the info level.
 */
export function requestLog(): AppMiddleware {
  return async function requestLog(ctx, next) {
    const started = process.hrtime.bigint();
    try {
      await next();
    } finally {
      const durationMs = Number(process.hrtime.bigint() - started) / 1e6;
      const matched = (ctx as { _matchedRoute?: unknown })._matchedRoute;
      const route = typeof matched === 'string' ? matched.replace(/:(\w+)/g, '{$1}') : 'unmatched';
      const probe = PROBES.has(route.replace(/^\/api\/v1/, '')) && ctx.status < 500;
      ctx.state.log[probe ? 'debug' : 'info'](
        {
          method: ctx.method,
          path: ctx.path,
          route,
          status: ctx.status,
          duration_ms: Math.round(durationMs * 100) / 100,
          partner_id: ctx.state.auth?.partnerId,
        },
        'request',
      );
    }
  };
}
