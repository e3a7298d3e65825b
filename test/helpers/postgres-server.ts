/**
 * The server that tests and benchmarks work on. It lives in `db/schema/scratch-database.ts`,
 * beside the migrated scratch database that `npm run db:dump` shares with `test/run.ts`.
 */
export { postgresServer, type PostgresServer } from '../../db/schema/scratch-database.ts';
