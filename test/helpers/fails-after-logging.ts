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

/** Occupies every thread of the pool (4 unless UV_THREADPOOL_SIZE says otherwise) for ~ms. */
function busyThreadPool(ms: number): void {
  const started = Date.now();
  const iterations = 10_000;
  pbkdf2('p', 's', iterations, 32, 'sha512', () => {
    // Calibrated on this machine: enough rounds of the same work to last ~ms on each thread.
    const rounds = Math.max(1, Math.round((ms / Math.max(1, Date.now() - started)) * iterations));
    const threads = Number(process.env.UV_THREADPOOL_SIZE ?? 4);
    for (let i = 0; i < threads; i++) pbkdf2('p', 's', rounds, 32, 'sha512', () => undefined);
  });
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
