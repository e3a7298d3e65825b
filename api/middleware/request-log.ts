import type { Logger } from '../../db/platform/log.ts';
import type { Metrics } from '../../db/platform/metrics.ts';
import { setSpanRoute } from '../../db/platform/tracing.ts';
import type { AppContext, AppMiddleware } from '../context.ts';
import { API_PREFIX } from '../route.ts';
import { requestLogFields } from './request-id.ts';

/** Health probes: an orchestrator calls them every few seconds; they log at debug unless they fail. */
const PROBES = new Set(['/health', '/health/live', '/health/ready']);

/**
 * Logs one line per request when it ends: method, path, the route template it matched (as the
 * OpenAPI document writes it, `/api/v1/bookings/{bookingId}`, or `unmatched`), status, duration
 * and partner. Probes that succeed log at debug, so they do not flood the info level. The same
 * template labels the request's duration in `metrics` and names its trace span: a raw path would
 * carry ids, and one label value per id is what a metrics store cannot afford.
 */
export function requestLog(log: Logger, metrics: Metrics): AppMiddleware {
  return async function requestLog(ctx, next) {
    const started = process.hrtime.bigint();
    try {
      await next();
    } finally {
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      const route = routeTemplate(ctx);
      setSpanRoute(ctx.method, route);
      metrics.requests.observe({ method: ctx.method, route, status: ctx.status }, seconds);
      const probe = PROBES.has(route.replace(/^\/api\/v1/, '')) && ctx.status < 500;
      // The fields of the request's child logger, written by the process logger: one line needs no
      // child of its own (request-id.ts).
      log[probe ? 'debug' : 'info'](
        {
          ...requestLogFields(ctx.state),
          method: ctx.method,
          path: pathOf(ctx),
          route,
          status: ctx.status,
          duration_ms: Math.round(seconds * 1e5) / 100,
        },
        'request',
      );
    }
  };
}

/** Router paths as templates, rewritten once each (the routes are a fixed set). */
const templates = new Map<string, string>();

/**
 * The template @koa/router matched, written as /openapi.json writes it, with its prefix (a request
 * to a route's unprefixed alias, `/health`, counts under its route, `/api/v1/health`); `unmatched`
 * for none.
 */
function routeTemplate(ctx: AppContext): string {
  const matched = (ctx as { _matchedRoute?: unknown })._matchedRoute;
  if (typeof matched !== 'string') return 'unmatched';
  let template = templates.get(matched);
  if (template === undefined) {
    template = matched.replace(/:(\w+)/g, '{$1}');
    if (!template.startsWith(`${API_PREFIX}/`)) template = API_PREFIX + template;
    templates.set(matched, template);
  }
  return template;
}

/** The request's path; its target as sent when Koa cannot parse it (refused: errors.ts). */
function pathOf(ctx: AppContext): string {
  try {
    return ctx.path;
  } catch {
    return ctx.url;
  }
}
