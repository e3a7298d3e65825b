/**
 * A process that logs LINES lines and then fails to start, through runAsProcess as web and worker
 * do, while libuv's thread pool (where asynchronous log writes run) is busy with other work for
 * about BUSY_MS: test/processes.test.ts checks that every line, the fatal one last, still reaches
 * stdout.
 */
import { pbkdf2 } from 'node:crypto';
import { createLogger } from '../../db/platform/log.ts';
import { runAsProcess } from '../../db/platform/shutdown.ts';

const LINES = Number(process.env.LINES ?? 100);
const BUSY_MS = Number(process.env.BUSY_MS ?? 500);

/**
 * Occupies every thread of the pool (4 unless UV_THREADPOOL_SIZE says otherwise) until `ms` have
 * passed: each thread runs short jobs (~20 ms on an idle machine of this class), one after another,
 * until the deadline. The deadline is wall time and the jobs are short, so a loaded machine (CI,
 * other tests' processes on the same two cores) makes the jobs slower, not the spell much longer:
 * the writes stay within what an exiting process waits for its lines (log.ts: 2 s), while a write
 * waits long enough for a thread that an exit not waiting for it loses its lines, which is what the
 * test catches. (Jobs of ~180 ms, 160,000 iterations, and a 500-ms spell let the last job started
 * before the deadline run past 2 s on a loaded CI machine: the test failed once with the fix in
 * place. The test now asks for 200 ms, still long enough for an exit that does not wait to lose
 * the write under way.)
 */
function busyThreadPool(ms: number): void {
  const deadline = Date.now() + ms;
  const threads = Number(process.env.UV_THREADPOOL_SIZE ?? 4);
  const job = () => {
    if (Date.now() < deadline) pbkdf2('p', 's', 20_000, 32, 'sha512', job);
  };
  for (let i = 0; i < threads; i++) job();
}

const log = createLogger('info');
await runAsProcess(log, async () => {
  await new Promise<void>((resolve) => {
    busyThreadPool(BUSY_MS);
    setTimeout(resolve, 50);
  });
  for (let i = 0; i < LINES; i++) log.info({ i }, 'line');
  throw new Error('the start failed');
});
