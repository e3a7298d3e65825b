/**
 * The service's processes run as operators run them (`node api/main.ts`, `node workers/main.ts`,
 * `node start.ts`), for tests of what only a real process shows: signals, exit codes, log lines,
 * two processes sharing one database.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

/** The checkout's root, where the scripts are. */
export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** A started process and what it has said. */
export interface Started {
  child: ChildProcess;
  /** Everything it wrote, stdout and stderr. */
  output: () => string;
  /** The first JSON log line with this `msg`, once it appears (rejects if the process exits first). */
  logLine: (msg: string) => Promise<Record<string, unknown>>;
  /**
   * Its exit code, once it has exited and its stdout and stderr are read to the end ('close', not
   * 'exit': at 'exit' the last lines it wrote may still be in the pipe).
   */
  exited: Promise<number | null>;
  /** SIGTERM, then its exit code (as `exited`). */
  stop: () => Promise<number | null>;
}

/**
 * Starts `script` with Node (the same runtime as the tests) in `cwd`, with `env` over the tests'
 * environment (LOG_LEVEL info, PORT 0 unless given; a variable set to undefined is removed).
 */
export function startProcess(
  script: string,
  env: Record<string, string | undefined> = {},
  cwd = ROOT,
): Started {
  const merged: NodeJS.ProcessEnv = { ...process.env, LOG_LEVEL: 'info', PORT: '0', ...env };
  for (const [name, value] of Object.entries(env)) if (value === undefined) delete merged[name];
  // As the npm scripts run them: the tracing preload first (it loads nothing unless OTEL_* asks).
  const args = ['--import', './db/platform/tracing-preload.ts', script];
  const child = spawn(process.execPath, args, { cwd, env: merged, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  // stdout's complete JSON lines, parsed once each (a chunk may end mid-line).
  const logged: Record<string, unknown>[] = [];
  let partial = '';
  const waiting: { msg: string; resolve: (line: Record<string, unknown>) => void }[] = [];
  const answer = () => {
    for (const w of [...waiting]) {
      const line = logged.find((line) => line.msg === w.msg);
      if (!line) continue;
      waiting.splice(waiting.indexOf(w), 1);
      w.resolve(line);
    }
  };
  child.stdout.on('data', (chunk: Buffer) => {
    const text = chunk.toString();
    output += text;
    const lines = (partial + text).split('\n');
    partial = lines.pop()!;
    for (const line of lines)
      if (line.startsWith('{')) logged.push(JSON.parse(line) as Record<string, unknown>);
    answer();
  });
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = (once(child, 'close') as Promise<[number | null]>).then(([code]) => code);
  return {
    child,
    exited,
    output: () => output,
    logLine: (msg) =>
      new Promise((resolve, reject) => {
        waiting.push({ msg, resolve });
        answer();
        void exited.then(() => reject(new Error(`exited before logging "${msg}":\n${output}`)));
      }),
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return exited;
      child.kill('SIGTERM');
      return exited;
    },
  };
}

/** A hard-linked copy of the working tree (no .git, no .data) in `into`: fast, and read only. */
export async function copyCheckout(into: string): Promise<void> {
  const entries = (await readdir(ROOT)).filter((name) => name !== '.git' && name !== '.data');
  await promisify(execFile)('cp', ['-al', ...entries.map((name) => path.join(ROOT, name)), into]);
}
