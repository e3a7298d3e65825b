/**
 * The logger: JSON lines whenever its output is read by a program, pino-pretty only when a person
 * watches a terminal (`script` gives the child a pseudo-terminal, as a shell would).
 */
import test from 'ava';
import { execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { ROOT } from '../helpers/processes.ts';

const logOneLine = `import('./db/platform/log.ts').then((m) => m.createLogger('info').info({ answer: 42 }, 'hello'))`;
const run = promisify(execFile);

test('a pipe gets one JSON line', async (t) => {
  const { stdout } = await run(process.execPath, ['-e', logOneLine], { cwd: ROOT });
  t.like(JSON.parse(stdout.trim()), { level: 30, msg: 'hello', answer: 42 });
});

test('lines logged just before process.exit are written, however many', async (t) => {
  const burst = `import('./db/platform/log.ts').then((m) => { const log = m.createLogger('info');
    for (let i = 0; i < 5000; i++) log.info({ i }, 'line'); process.exit(3); })`;
  const exited = await run(process.execPath, ['-e', burst], { cwd: ROOT, maxBuffer: 64 * 1024 * 1024 }).then(
    () => ({ stdout: '', code: 0 }),
    (err: { stdout: string; code: number }) => err,
  );
  t.is(exited.code, 3);
  const lines = exited.stdout
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as { i: number });
  t.deepEqual(
    lines.map((line) => line.i),
    Array.from({ length: 5000 }, (_, i) => i),
  );
});

/** A child process that logs as `script` says and then stays alive until killed. */
function loggingChild(script: string) {
  const child = spawn(
    process.execPath,
    [
      '-e',
      `import('./db/platform/log.ts').then((m) => { const log = m.createLogger('info'); ${script}; setInterval(() => {}, 60_000); })`,
    ],
    { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] },
  );
  let stdout = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  return {
    child,
    /** Resolves once stdout holds `count` lines (the child still running). */
    lines: async (count: number): Promise<string[]> => {
      while (stdout.split('\n').length - 1 < count) await once(child.stdout, 'data');
      return stdout.trim().split('\n');
    },
    /** How many write system calls the child has made (Linux). */
    writes: async (): Promise<number> => {
      return Number(/syscw: (\d+)/.exec(await readFile(`/proc/${child.pid}/io`, 'utf8'))![1]);
    },
  };
}

test('a lone line is written while the process runs on, not held for company', async (t) => {
  const { child, lines } = loggingChild(`log.info({ answer: 42 }, 'alone')`);
  t.teardown(() => child.kill());
  const [line] = await lines(1);
  t.like(JSON.parse(line!), { msg: 'alone', answer: 42 });
  t.is(child.exitCode, null);
});

test('many lines go out in few writes, all of them, in order, and an idle logger writes nothing', async (t) => {
  const { child, lines, writes } = loggingChild(`for (let i = 0; i < 2000; i++) log.info({ i }, 'line')`);
  t.teardown(() => child.kill());
  const written = await lines(2000);
  t.deepEqual(
    written.map((line) => (JSON.parse(line) as { i: number }).i),
    Array.from({ length: 2000 }, (_, i) => i),
  );
  // ~200 KB in 4 KiB batches: about fifty writes, not one per line (the rest of the count is the
  // process's own start).
  await sleep(200); // the last batch's completion, posted back from the thread pool, is a write too
  const settled = await writes();
  t.true(settled < 1000, `${settled} writes`);
  // Nothing waits now: no timer keeps writing empty batches (it would, every 50 ms).
  await sleep(300);
  t.is(await writes(), settled);
});

test('a terminal gets pino-pretty', async (t) => {
  const command = `${JSON.stringify(process.execPath)} -e ${JSON.stringify(logOneLine)}`;
  const { stdout } = await run('script', ['-qec', command, '/dev/null'], { cwd: ROOT });
  t.regex(stdout, /INFO.*hello/);
  t.regex(stdout, /answer.*42/);
  t.false(stdout.trimStart().startsWith('{'), stdout);
});
