/**
 * Waiting for PostgreSQL at start-up. `web` and `worker` started while the database is down (a
 * deploy racing a database restart, a laptop whose PostgreSQL comes up later) used to die at once
 * with a stack trace; they now wait, saying so in a JSON line now and then, and start as soon as it
 * answers. A database that answers but refuses (wrong password, no such database) is not an outage:
 * that fails at once.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import type { Logger } from '../platform/log.ts';
import { isDatabaseUnavailable } from './pg-errors.ts';

/** First pause between tries, doubled each time up to the longest. */
const FIRST_PAUSE_MS = 250;
const LONGEST_PAUSE_MS = 5_000;
const CONNECT_TIMEOUT_MS = 5_000;

/**
 * The tries of a start-up wait, numbered from 1: the loop body runs, and the next try comes after a
 * pause of 250 ms, doubled each time up to 5 s. An abort of `signal` during a pause rejects.
 */
export async function* tries(signal?: AbortSignal): AsyncGenerator<number> {
  for (let n = 1, pause = FIRST_PAUSE_MS; ; n++, pause = Math.min(pause * 2, LONGEST_PAUSE_MS)) {
    yield n;
    await sleep(pause, undefined, signal ? { signal } : {});
  }
}

/** Resolves once the database at `databaseUrl` answers a query; rejects on abort or a refusal. */
export async function waitForDatabase(databaseUrl: string, log: Logger, signal?: AbortSignal): Promise<void> {
  for await (const tried of tries(signal)) {
    const client = new pg.Client({
      connectionString: databaseUrl,
      connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    });
    client.on('error', () => undefined); // a connection dying here is what the loop handles
    try {
      await client.connect();
      await client.query('select 1');
      if (tried > 1) log.info({ tries: tried }, 'the database answers');
      return;
    } catch (err) {
      if (!isDatabaseUnavailable(err)) throw err;
      // Said on the first miss, then every tenth: an outage should not flood the log.
      if (tried % 10 === 1)
        log.warn({ err: (err as Error).message, tries: tried }, 'waiting for the database');
    } finally {
      await client.end().catch(() => undefined);
    }
  }
  throw new Error('unreachable: tries() never ends');
}

/**
 * Runs `attempt` until it succeeds, again after a growing pause each time it fails because the
 * database became unavailable meanwhile: a connection that drops between waitForDatabase() and the
 * end of a start-up (pg-boss's first queries, a worker's subscriptions) no longer stops the process.
 * `attempt` undoes what it did before it rejects. Any other error, or an abort, rejects at once.
 */
export async function retryWhileUnavailable<T>(
  attempt: () => Promise<T>,
  log: Logger,
  what: string,
  signal?: AbortSignal,
): Promise<T> {
  for await (const tried of tries(signal)) {
    try {
      return await attempt();
    } catch (err) {
      if (!isDatabaseUnavailable(err)) throw err;
      if (tried % 10 === 1)
        log.warn(
          { err: (err as Error).message, tries: tried },
          `${what}: the database went away; trying again`,
        );
    }
  }
  throw new Error('unreachable: tries() never ends');
}
