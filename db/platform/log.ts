/**
 * One structured JSON logger on stdout (pino). Requests and jobs log through children that carry
 * their scope (`request_id`, `partner_id`, `job`, `job_id`). API keys, webhook secrets and SQL
 * bindings are never logged; the redaction list is a second line of defence for headers.
 *
 * When stdout is a terminal a person is reading it: the same lines go through pino-pretty
 * (colours, one readable line per entry). Anything that reads the output — a pipe, a file, a log
 * shipper, the contract's scripts — gets JSON lines, as CONTRACT.md promises.
 *
 * JSON lines are written asynchronously, a few kilobytes at a time: lines wait until BATCH_BYTES of
 * them do, or LINGER_MS after the first, and then go out in one write. Such a write runs on libuv's
 * thread pool, and handing one over costs more than the line (a thread woken and a completion
 * posted back: ~45 µs a write on this machine class against ~10 µs for the line itself; measured in
 * docs/BENCHMARKS.md), so a busy process makes one write for a dozen requests' lines rather than
 * one for each. A write never blocks the process, whatever stdout is (a file, a pipe, a socket that
 * a stalled log shipper stopped reading). A process that exits on purpose first waits for its lines
 * to be written (`logsWritten()`, which shutdown.ts awaits before every exit): pino's exit hook
 * writes only what is still buffered, not a write already handed to the pool, and a busy pool let
 * an exit overtake it (a failed start printed nothing). Only a process killed outright loses its
 * last lines (at most LINGER_MS of them, or the write under way).
 */
import { createRequire } from 'node:module';
import { pino, type DestinationStream, type Logger } from 'pino';

export type { Logger };

/**
 * The most log output held while stdout does not take it (a stalled pipe or log shipper): beyond
 * it new lines are dropped rather than buffered without end, and the process neither blocks on its
 * logs nor runs out of memory for them.
 */
const MAX_BUFFERED = 16 * 1024 * 1024;
/** Lines are written once this many bytes of them wait… */
const BATCH_BYTES = 4096;
/** …or this long after the first of them was logged. */
const LINGER_MS = 50;

/** Creates the process logger at the configured level. */
export function createLogger(level: string, { pretty = process.stdout.isTTY === true } = {}): Logger {
  const options = {
    level,
    base: { pid: process.pid },
    timestamp: pino.stdTimeFunctions.isoTime,
    redact: { paths: ['headers["x-api-key"]', 'api_key', 'secret_key'], censor: '[redacted]' },
  };
  return pino(options, pretty ? prettyStream() : batchedStdout());
}

/**
 * stdout through sonic-boom, which writes once BATCH_BYTES wait (its `minLength`; any minLength
 * also makes flush(cb) wait for the write under way, as logsWritten() needs), and a timer that
 * writes the rest LINGER_MS after it was logged. The timer is armed only while lines wait (an idle
 * process wakes for nothing); the bytes that wait are counted from what was logged, what sonic-boom
 * wrote and what it dropped (over MAX_BUFFERED), since it does not say.
 */
function batchedStdout(): DestinationStream & { flush(cb?: (err?: Error) => void): void; flushSync(): void } {
  const boom = pino.destination({ dest: 1, sync: false, minLength: BATCH_BYTES, maxLength: MAX_BUFFERED });
  let waiting = 0;
  let timer: NodeJS.Timeout | undefined;
  const linger = () => {
    timer ??= setTimeout(() => {
      timer = undefined;
      // A write under way takes the rest when it ends, or its 'drain' lingers again.
      boom.flush();
    }, LINGER_MS).unref();
  };
  // An empty write (a flush that found nothing) says nothing waits, whatever the count said.
  boom.on('write', (bytes: number) => (waiting = bytes === 0 ? 0 : waiting - bytes));
  boom.on('drop', (line: string) => (waiting -= Buffer.byteLength(line)));
  boom.on('drain', () => {
    if (waiting > 0) linger();
  });
  return {
    write(line: string) {
      waiting += Buffer.byteLength(line);
      boom.write(line);
      linger();
    },
    flush: (cb) => boom.flush(cb),
    flushSync: () => boom.flushSync(),
  };
}

/** How long an exiting process waits for its log lines at most (stdout may be stalled). */
const WRITE_WAIT_MS = 2000;

/**
 * Resolves once every line logged so far has been written to stdout, or after WRITE_WAIT_MS when
 * stdout does not take them.
 */
export function logsWritten(log: Logger): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, WRITE_WAIT_MS);
    log.flush(() => {
      clearTimeout(timer);
      resolve();
    });
  });
}

/**
 * pino-pretty in this thread and synchronous, so the last lines before an exit are not lost (a
 * transport would run in a worker). Loaded only for a terminal: other processes never pay for it.
 */
function prettyStream(): DestinationStream {
  const load = createRequire(import.meta.url);
  const pretty = load('pino-pretty') as (options: object) => DestinationStream;
  return pretty({ sync: true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname' });
}
