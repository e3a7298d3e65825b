import type { AppMiddleware } from '../context.ts';

/**
 * Counts requests whose handlers are still running, for a graceful stop. The stop waits for
 * `idle()` before it closes the pool: a client that hangs up mid-request closes its socket (so the
 * HTTP server may consider itself drained) while the handler is still using the database. Once
 * `drain()` was called, every response asks its client to close the connection, so keep-alive
 * clients open a new one (to another process) for their next request.
 */
export function inFlight(): { middleware: AppMiddleware; idle: () => Promise<void>; drain: () => void } {
  let running = 0;
  let draining = false;
  let waiters: (() => void)[] = [];
  return {
    middleware: async function inFlight(ctx, next) {
      running++;
      try {
        await next();
      } finally {
        if (draining) ctx.set('Connection', 'close');
        running--;
        if (running === 0) {
          for (const wake of waiters) wake();
          waiters = [];
        }
      }
    },
    idle: () => (running === 0 ? Promise.resolve() : new Promise<void>((resolve) => waiters.push(resolve))),
    drain: () => {
      draining = true;
    },
  };
}
