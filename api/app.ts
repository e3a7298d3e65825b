/**
 * The Koa app. The middleware order is fixed here and only here:
 *   in flight → request id → request log → errors → router → not found
 * and, inside each declared route:
 *   authenticate → rate limit (keyed routes) → HTTP headers → JSON body (routes with one)
 *   → validate → handler.
 * Authentication runs per route, so unknown paths answer 404 whether or not a key was sent, and
 * unauthenticated requests are neither parsed nor counted against any key. A valid key sent to an
 * unknown path is counted like any keyed request and gets its rate-limit headers (CONTRACT.md:
 * every response to a request with a valid key carries them).
 */
import Router from '@koa/router';
import Koa from 'koa';
import type { AppContext, AppDeps, AppMiddleware, AppState } from './context.ts';
import { InvalidFieldError, RouteNotFoundError, UnauthenticatedError } from './errors.ts';
import { namedAsSent } from './idempotency.ts';
import { authenticate } from './middleware/authenticate.ts';
import { errors } from './middleware/errors.ts';
import { httpHeaders } from './middleware/http-headers.ts';
import { inFlight } from './middleware/in-flight.ts';
import { jsonBody } from './middleware/json-body.ts';
import { rateLimit } from './middleware/rate-limit.ts';
import { requestId } from './middleware/request-id.ts';
import { requestLog } from './middleware/request-log.ts';
import { asValidationError, validateInput } from './middleware/validate.ts';
import { API_PREFIX, EventStream, TypedBytes, type Route } from './route.ts';
import { unserved, type Metrics } from '../db/platform/metrics.ts';
import { routes as allRoutes } from './routes/index.ts';
import { StreamHub } from './feed/stream-hub.ts';

/**
 * The Koa app, plus what a graceful stop needs: `drain()` makes every response from then on close
 * its connection, `endStreams()` ends every availability stream at once, and `idle()` waits until
 * no handler is running.
 */
export type App = Koa<AppState> & {
  idle: () => Promise<void>;
  drain: () => void;
  endStreams: () => Promise<void>;
};

/** Builds the app on the given dependencies; tests build one per database (or two, to race). */
export function buildApp(deps: AppDeps, routes: readonly Route[] = allRoutes): App {
  const tracker = inFlight();
  const metrics = deps.metrics ?? unserved;
  const streams = deps.streams ?? new StreamHub({ db: deps.db, config: deps.config, log: deps.log, metrics });
  const app = Object.assign(new Koa<AppState>(), {
    idle: tracker.idle,
    drain: tracker.drain,
    endStreams: () => streams.endAll(),
  });
  // Errors are rendered by `errors()`; what still reaches Koa is a socket failing mid-response.
  app.on('error', (err: Error) => deps.log.warn({ err: err.message }, 'response stream error'));

  const router = new Router<AppState>();
  for (const route of routes) {
    const stack: AppMiddleware[] = [];
    if (route.auth) stack.push(authenticate(deps.db), rateLimit(metrics));
    stack.push(httpHeaders());
    if (route.body) stack.push(jsonBody());
    stack.push(handle(route, { ...deps, streams }));
    const paths = [API_PREFIX + route.path.replace(/\{(\w+)\}/g, ':$1')];
    if (route.rootAlias) paths.push(route.rootAlias);
    for (const path of paths) router.register(path, [route.method], stack);
  }

  app.use(tracker.middleware);
  app.use(requestId(deps.log));
  app.use(requestLog(deps.log, metrics));
  app.use(errors());
  app.use(router.routes());
  app.use(notFound(deps, metrics));
  return app;
}

function handle(route: Route, deps: AppDeps): AppMiddleware {
  return async function handle(ctx) {
    const input = validateInput(route, ctx);
    const partnerId = ctx.state.auth?.partnerId ?? '';
    const result = await route
      .handler(
        {
          ...input,
          partnerId,
          headers: ctx.headers,
          // Worked out only by the routes that read it.
          get sent() {
            return namedAsSent(ctx.state.body, input.body);
          },
        },
        // The request's logger is made only if the handler logs (request-id.ts).
        {
          ...deps,
          get log() {
            return ctx.state.log;
          },
        },
      )
      .catch((err) => {
        throw err instanceof InvalidFieldError ? asValidationError(route, err) : err;
      });
    ctx.status = result.status;
    if (result.headers) ctx.set(result.headers);
    if (result.body instanceof EventStream) {
      // Headers now, the body as events come: Koa leaves the response to the stream.
      ctx.set({
        'Content-Type': 'text/event-stream; charset=utf-8',
        'Cache-Control': 'no-cache, no-transform',
        'X-Accel-Buffering': 'no',
      });
      ctx.respond = false;
      ctx.res.writeHead(result.status);
      result.body.attach(ctx.req, ctx.res);
    } else if (result.body instanceof TypedBytes) {
      ctx.type = result.body.mediaType;
      ctx.body = encoded(ctx, result.body);
    } else if (result.body !== undefined) ctx.body = result.body;
  };
}

/**
 * A body's bytes in the encoding the client rates highest among those it was compressed in (Brotli
 * on a tie: it is the smaller), or as they are when it accepts neither.
 */
function encoded(ctx: AppContext, body: TypedBytes): Buffer {
  if (!body.compressible) return body.bytes;
  ctx.vary('Accept-Encoding');
  if (!body.compressed) return body.bytes;
  const accepted = ctx.get('accept-encoding');
  const br = quality(accepted, 'br');
  const gzip = quality(accepted, 'gzip');
  if (br === 0 && gzip === 0) return body.bytes;
  const encoding = br >= gzip ? 'br' : 'gzip';
  ctx.set('Content-Encoding', encoding);
  return body.compressed[encoding];
}

const QVALUE = /^(0(\.\d{0,3})?|1(\.0{0,3})?)$/;

/**
 * The q-value `header` (Accept-Encoding) gives `coding`, or its `*`'s; 0 when neither is listed.
 * A q that is not one (RFC 9110 §12.4.2: 0 to 1, three decimals at most) counts as 0: a coding the
 * client did not clearly accept is never sent.
 */
function quality(header: string, coding: string): number {
  let star = 0;
  for (const item of header.split(',')) {
    const [name = '', ...params] = item.trim().toLowerCase().split(';');
    const q = params.map((p) => /^\s*q=(\S*)\s*$/.exec(p)?.[1]).find((v) => v !== undefined);
    const value = q === undefined ? 1 : QVALUE.test(q) ? Number(q) : 0;
    if (name.trim() === coding) return value;
    if (name.trim() === '*') star = value;
  }
  return star;
}

function notFound(deps: AppDeps, metrics: Metrics): AppMiddleware {
  const authenticateKey = authenticate(deps.db);
  const limit = rateLimit(metrics);
  return async function notFound(ctx) {
    if (ctx.get('x-api-key')) {
      try {
        await authenticateKey(ctx, async () => {
          await limit(ctx, () => Promise.resolve());
        });
      } catch (err) {
        // An unknown path answers 404 whatever the key; only an over-limit key hears 429 first.
        if (!(err instanceof UnauthenticatedError)) throw err;
      }
    }
    // A CONNECT's target is an authority (`host:port`), which has no path.
    throw new RouteNotFoundError(ctx.method, ctx.path ?? ctx.url);
  };
}
