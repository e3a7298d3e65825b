/**
 * A PostgreSQL server to make throwaway databases on, and a freshly migrated database on it. The
 * test runner builds its template database this way and `npm run db:dump` the database it
 * describes, so both see the schema that `npm run migrate` builds, from the same code: DATABASE_URL's
 * server when set (its user must be allowed to CREATE DATABASE), otherwise an embedded PostgreSQL.
 */
import { randomBytes } from 'node:crypto';
import { migrate } from './migrate.ts';
import { startEmbeddedPostgres } from '../platform/embedded/server.ts';
import type { Logger } from '../platform/log.ts';
import { dropDatabase, ensureDatabase, withDatabase } from '../postgres/database-url.ts';

/** A PostgreSQL server to create databases on, and how to let go of it. */
export interface PostgresServer {
  adminUrl: string;
  embedded: boolean;
  stop(): Promise<void>;
}

/**
 * DATABASE_URL's server when `databaseUrl` is set, otherwise an embedded PostgreSQL whose data is
 * `.data/<dataName>` (one name per kind of user, so a test run and a dump never share a data folder).
 */
export async function postgresServer(
  databaseUrl: string | undefined,
  dataName: string,
  log: Logger,
): Promise<PostgresServer> {
  if (databaseUrl) return { adminUrl: databaseUrl, embedded: false, stop: () => Promise.resolve() };
  const server = await startEmbeddedPostgres(dataName, { log });
  return { adminUrl: server.adminUrl, embedded: true, stop: () => server.stop() };
}

/**
 * Creates a database named `<prefix>_<random hex>` on the server of `adminUrl` (a unique name, so
 * two runs on one server do not collide), migrates it to the latest schema (knex and pg-boss, as
 * `npm run migrate` does), hands its URL and name to `use`, and drops it when `use` settles.
 */
export async function withMigratedDatabase<T>(
  adminUrl: string,
  prefix: string,
  log: Logger,
  use: (url: string, name: string) => Promise<T>,
): Promise<T> {
  const name = `${prefix}_${randomBytes(4).toString('hex')}`;
  try {
    await ensureDatabase(adminUrl, name);
    const url = withDatabase(adminUrl, name);
    await migrate(url, log);
    return await use(url, name);
  } finally {
    await dropDatabase(adminUrl, name).catch(() => undefined);
  }
}
