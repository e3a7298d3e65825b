/**
 * The life of a long-running process (web, worker, start): how it starts, what it prints, how it
 * stops.
 */
import { isLostConnection } from '../postgres/pg-errors.ts';
import { logsWritten, type Logger } from './log.ts';

declare global {
  /** The started OpenTelemetry SDK, when tracing-preload.ts started one. */
  var __bookingTracing: { shutdown(): Promise<void> } | undefined;
}

/**
 * Runs `stop` once on the first SIGTERM or SIGINT, then exits 0 (1 if stopping failed). A second
 * signal while stopping exits at once, for an operator who really means it.
 */
export function onShutdownSignal(log: Logger, stop: () => Promise<void>): void {
  let stopping = false;
  const handler = (signal: NodeJS.Signals) => {
    if (stopping) process.exit(1);
    stopping = true;
    log.info({ signal }, 'shutting down');
    // Traces still buffered (tracing-preload.ts) are sent once the parts have stopped.
    const flushTraces = () => globalThis.__bookingTracing?.shutdown().catch(() => undefined);
    stop().then(
      async () => {
        await flushTraces();
        await exitWhenLogged(log, 0);
      },
      (err: unknown) => {
        log.error({ err }, 'shutdown failed');
        return exitWhenLogged(log, 1);
      },
    );
  };
  process.on('SIGTERM', handler);
  process.on('SIGINT', handler);
}

/**
 * Makes every line the process prints JSON, as CONTRACT.md asks of web and worker: Node's own
 * warnings go through the logger instead of its plain-text printer, and an uncaught error is one
 * fatal log line and exit 1 instead of a stack trace on stderr.
 *
 * Except a database connection lost where nothing listened for it: a pg client reports the loss as
 * an `'error'` event, and an event nobody listens for is thrown. pg-boss removes every listener of
 * its LISTEN connection before ending it at stop, so a restart or `pg_terminate_backend` reaching
 * that connection in between ended a stopping worker with exit 1 (a CI run). The connection was
 * being thrown away and its owner holds nothing else, so it is a warning and the process goes on.
 * A rejected promise nobody handled is still fatal, whatever its error: that is our own bug.
 */
export function printOnlyJson(log: Logger): void {
  process.removeAllListeners('warning');
  process.on('warning', (warning) =>
    log.warn({ warning: { name: warning.name, message: warning.message } }, 'node warning'),
  );
  const fatal = (err: unknown) => void exitFatally(log, err, 'uncaught error');
  process.on('uncaughtException', (err, origin) => {
    if (origin === 'uncaughtException' && isLostConnection(err)) {
      log.warn({ err: err.message }, 'a database connection was lost with nothing listening for it');
    } else fatal(err);
  });
  process.on('unhandledRejection', fatal);
}

/** A started part of the service that can stop gracefully. */
export interface Stoppable {
  stop(): Promise<void>;
}

/**
 * Runs `start` as the process: only JSON lines are printed; SIGTERM or SIGINT stops it gracefully,
 * also during start-up (the `signal` given to `start` is aborted then, so a start still waiting for
 * the database gives up and the process exits 0); a start that fails is a fatal line and exit 1.
 */
export async function runAsProcess(
  log: Logger,
  start: (signal: AbortSignal) => Promise<Stoppable>,
): Promise<void> {
  printOnlyJson(log);
  const abort = new AbortController();
  const started = start(abort.signal);
  onShutdownSignal(log, async () => {
    abort.abort();
    const part = await started.catch(() => undefined);
    await part?.stop();
  });
  try {
    await started;
  } catch (err) {
    if (abort.signal.aborted) return; // stopping: the signal handler exits
    await exitFatally(log, err, 'could not start');
  }
}

/** Exits with `code` once the lines logged so far are written (log.ts: they may still be under way). */
async function exitWhenLogged(log: Logger, code: number): Promise<never> {
  await logsWritten(log);
  process.exit(code);
}

/**
 * Logs `err` as one fatal line and exits 1 once it is written. The earlier lines are written first:
 * pino writes a fatal line synchronously, which would put it ahead of a write still under way.
 */
async function exitFatally(log: Logger, err: unknown, msg: string): Promise<never> {
  await logsWritten(log);
  log.fatal({ err }, msg);
  return exitWhenLogged(log, 1);
}

/**
 * Waits for `stopping` (the part of a stop that needs the database) for at most `ms`, then goes on
 * without it, logging `warning`. A database that stopped answering (a network partition: nothing
 * refused, nothing reset, only silence) leaves a statement in flight for ever, and a pool closes only
 * once its statements are done: such a stop never ended, and web must exit within 10 s of SIGTERM
 * (CONTRACT.md), a worker within its grace period. What is left is cut when the process exits.
 */
export async function waitAtMost(
  log: Logger,
  ms: number,
  stopping: Promise<unknown>,
  warning: string,
): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), ms)));
  const outcome = await Promise.race([stopping, late]).finally(() => clearTimeout(timer));
  if (outcome === 'late') {
    log.warn({ waited_ms: ms }, warning);
    // Whatever it rejects with later belongs to a stop given up on.
    stopping.catch(() => undefined);
  }
}

/** One Stoppable of several, stopped in the order given (absent ones skipped). */
export function stopInTurn(...parts: (Stoppable | undefined)[]): Stoppable {
  return {
    async stop() {
      for (const part of parts) await part?.stop();
    },
  };
}
