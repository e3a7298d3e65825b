import type { AppMiddleware } from '../context.ts';

/**
 * Counts requests whose handlers are still running. A graceful stop waits for `idle()` before it
 * closes the pool: a client that hangs up mid-request closes its socket (so the HTTP server may
 * consider itself drained) while the handler is still using the database.
 */
export function inFlight(): { middleware: AppMiddleware; idle: () => Promise<void> } {
  let running = 0;
  let waiters: (() => void)[] = [];
  return {
    middleware: async function inFlight(_ctx, next) {
      running++;
      try {
        await next();
      } finally {
        running--;
        if (running === 0) {
          for (const wake of waiters) wake();
          waiters = [];
        }
      }
    },
    idle: () => (running === 0 ? Promise.resolve() : new Promise<void>((resolve) => waiters.push(resolve))),
  };
}
