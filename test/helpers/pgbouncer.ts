/**
 * A PgBouncer of the test's own (Debian's `pgbouncer`, 1.18 on our machines) in transaction pooling
 * in front of a PostgreSQL server, run as a child process: its own pgbouncer.ini in a temporary
 * folder, a free port on 127.0.0.1, no unix socket, its log on stderr. PgBouncer refuses to run as
 * root, so as root it switches to `nobody` (-u). It authenticates nobody (`auth_type = trust`) and
 * logs into the server with the user and password of the server's URL (its auth file).
 *
 * Everything else is PgBouncer's default. In particular there is no `ignore_startup_parameters`:
 * PgBouncer refuses a client whose startup packet carries a parameter other than those it tracks
 * (application_name, client_encoding, DateStyle, TimeZone, standard_conforming_strings), so a
 * process that sends a timeout or `options` at startup cannot connect, as behind a real one.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, connect, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

/** The pgbouncer program on PATH or where Debian installs it; undefined when there is none. */
export function findPgBouncer(): string | undefined {
  const dirs = [...(process.env.PATH ?? '').split(path.delimiter), '/usr/sbin', '/usr/bin'];
  return dirs
    .filter((dir) => path.isAbsolute(dir))
    .map((dir) => path.join(dir, 'pgbouncer'))
    .find((file) => existsSync(file));
}

/** A running PgBouncer. */
export interface PgBouncer {
  port: number;
  /** `serverUrl` with its host and port replaced by PgBouncer's, on database `database`. */
  url(database: string): string;
  /** What PgBouncer logged. */
  output(): string;
  stop(): Promise<void>;
}

/**
 * Starts PgBouncer in front of the server of `serverUrl` (any database on it, by its own name).
 * `aliases` adds databases under other names with options of their own, e.g.
 * `{ tight: 'dbname=x pool_size=1' }`.
 */
export async function startPgBouncer(
  program: string,
  serverUrl: string,
  aliases: Record<string, string> = {},
): Promise<PgBouncer> {
  const server = new URL(serverUrl);
  const user = decodeURIComponent(server.username);
  const password = decodeURIComponent(server.password);
  const target = `host=${server.hostname} port=${server.port || 5432}`;
  const folder = await mkdtemp(path.join(tmpdir(), 'pgbouncer-'));
  // As root PgBouncer reads its files again after switching to `nobody`.
  await chmod(folder, 0o755);
  const quote = (s: string) => `"${s.replaceAll('"', '""')}"`;
  await writeFile(path.join(folder, 'users.txt'), `${quote(user)} ${quote(password)}\n`, { mode: 0o644 });
  for (let tries = 1; ; tries++) {
    const port = await freePort();
    const ini = [
      '[databases]',
      ...Object.entries(aliases).map(([name, options]) => `${name} = ${target} ${options}`),
      `* = ${target}`,
      '[pgbouncer]',
      'listen_addr = 127.0.0.1',
      `listen_port = ${port}`,
      'unix_socket_dir =',
      'pool_mode = transaction',
      'auth_type = trust',
      `auth_file = ${path.join(folder, 'users.txt')}`,
      '',
    ].join('\n');
    await writeFile(path.join(folder, 'pgbouncer.ini'), ini, { mode: 0o644 });
    const root = process.getuid?.() === 0;
    const child = spawn(program, [...(root ? ['-u', 'nobody'] : []), path.join(folder, 'pgbouncer.ini')], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    // 'close', not 'exit': the output is read to its end before it is searched below.
    const exited = once(child, 'close');
    const up = await Promise.race([listening(port).then(() => true), exited.then(() => false)]);
    if (!up) {
      // Another process took the port between our probe and PgBouncer's bind: try another.
      if (/Address already in use/.test(output) && tries < 3) continue;
      await rm(folder, { recursive: true, force: true });
      throw new Error(`pgbouncer did not start:\n${output}`);
    }
    return {
      port,
      url: (database) => {
        const url = new URL(serverUrl);
        url.hostname = '127.0.0.1';
        url.port = String(port);
        url.pathname = `/${database}`;
        return url.toString();
      },
      output: () => output,
      stop: async () => {
        if (child.exitCode === null && child.signalCode === null) {
          child.kill('SIGTERM'); // immediate shutdown
          await exited;
        }
        await rm(folder, { recursive: true, force: true });
      },
    };
  }
}

async function freePort(): Promise<number> {
  const probe = createServer();
  probe.listen(0, '127.0.0.1');
  await once(probe, 'listening');
  const { port } = probe.address() as AddressInfo;
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

/** Resolves once something accepts connections on `port`. */
async function listening(port: number): Promise<void> {
  for (;;) {
    const accepted = await new Promise<boolean>((resolve) => {
      const socket = connect(port, '127.0.0.1');
      socket.once('connect', () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
    if (accepted) return;
    await sleep(50);
  }
}
