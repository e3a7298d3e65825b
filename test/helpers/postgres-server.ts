import { startEmbeddedPostgres } from '../../db/platform/embedded/server.ts';
import type { Logger } from '../../db/platform/log.ts';

/** A PostgreSQL server to create databases on, and how to let go of it. */
export interface PostgresServer {
  adminUrl: string;
  embedded: boolean;
  stop(): Promise<void>;
}

/**
 * The server that tests and benchmarks work on: DATABASE_URL's when set (its user must be allowed
 * to CREATE DATABASE), otherwise an embedded PostgreSQL whose data is `.data/<dataName>`.
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
