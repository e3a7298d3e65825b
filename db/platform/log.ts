/**
 * One structured JSON logger on stdout (pino). Requests and jobs log through children that carry
 * their scope (`request_id`, `partner_id`, `job`, `job_id`). API keys, webhook secrets and SQL
 * bindings are never logged; the redaction list is a second line of defence for headers.
 *
 * When stdout is a terminal a person is reading it: the same lines go through pino-pretty
 * (colours, one readable line per entry). Anything that reads the output — a pipe, a file, a log
 * shipper, the contract's scripts — gets JSON lines, as CONTRACT.md promises.
 *
 * JSON lines are written asynchronously: a line logged while a write is under way joins the next
 * write, so a busy process makes one write for many lines instead of a blocking write(2) per line
 * (one per request and one per webhook attempt: measured in docs/BENCHMARKS.md). Nothing waits
 * for a timer: a lone line is written at once. Such a write runs on libuv's thread pool, so a
 * process that exits on purpose first waits for its lines to be written (`logsWritten()`, which
 * shutdown.ts awaits before every exit): pino's exit hook writes only what is still buffered, not a
 * write already handed to the pool, and a busy pool let an exit overtake it (a failed start printed
 * nothing). Only a process killed outright loses the lines of its last write.
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

/** Creates the process logger at the configured level. */
export function createLogger(level: string, { pretty = process.stdout.isTTY === true } = {}): Logger {
  const options = {
    level,
    base: { pid: process.pid },
    timestamp: pino.stdTimeFunctions.isoTime,
    redact: { paths: ['headers["x-api-key"]', 'api_key', 'secret_key'], censor: '[redacted]' },
  };
  return pino(
    options,
    pretty
      ? prettyStream()
      : // minLength 1 writes every line at once as 0 does (a line is never empty), and makes
        // flush(cb) wait for the write under way, which with 0 it does not (logsWritten()).
        pino.destination({ dest: 1, sync: false, minLength: 1, maxLength: MAX_BUFFERED }),
  );
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
