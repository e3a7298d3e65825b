import type { AppMiddleware } from '../context.ts';

/** Logs one line per request when it ends: method, path, status, duration and partner. */
export function requestLog(): AppMiddleware {
  return async function requestLog(ctx, next) {
    const started = process.hrtime.bigint();
    try {
      await next();
    } finally {
      const durationMs = Number(process.hrtime.bigint() - started) / 1e6;
      ctx.state.log.info(
        {
          method: ctx.method,
          path: ctx.path,
          status: ctx.status,
          duration_ms: Math.round(durationMs * 100) / 100,
          partner_id: ctx.state.auth?.partnerId,
        },
        'request',
      );
    }
  };
}
