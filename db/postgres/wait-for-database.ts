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

/** Resolves once the database at `databaseUrl` answers a query; rejects on abort or a refusal. */
export async function waitForDatabase(databaseUrl: string, log: Logger, signal?: AbortSignal): Promise<void> {
  for (let tries = 1, pause = FIRST_PAUSE_MS; ; tries++, pause = Math.min(pause * 2, LONGEST_PAUSE_MS)) {
    const client = new pg.Client({
      connectionString: databaseUrl,
      connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    });
    client.on('error', () => undefined); // a connection dying here is what the loop handles
    try {
      await client.connect();
      await client.query('select 1');
      if (tries > 1) log.info({ tries }, 'the database answers');
      return;
    } catch (err) {
      if (!isDatabaseUnavailable(err)) throw err;
      // Said on the first miss, then every tenth: an outage should not flood the log.
      if (tries % 10 === 1) log.warn({ err: (err as Error).message, tries }, 'waiting for the database');
    } finally {
      await client.end().catch(() => undefined);
    }
    await sleep(pause, undefined, signal ? { signal } : {});
  }
}
