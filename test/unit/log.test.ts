/**
 * The logger: JSON lines whenever its output is read by a program, pino-pretty only when a person
 * watches a terminal (`script` gives the child a pseudo-terminal, as a shell would).
 */
import test from 'ava';
import { execFile } from 'node:child_process';
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

test('a terminal gets pino-pretty', async (t) => {
  const command = `${JSON.stringify(process.execPath)} -e ${JSON.stringify(logOneLine)}`;
  const { stdout } = await run('script', ['-qec', command, '/dev/null'], { cwd: ROOT });
  t.regex(stdout, /INFO.*hello/);
  t.regex(stdout, /answer.*42/);
  t.false(stdout.trimStart().startsWith('{'), stdout);
});
