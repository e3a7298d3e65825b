/**
 * `npm test`'s database step, then ava. Uses DATABASE_URL's server when set, otherwise an embedded
 * PostgreSQL under `.data/test-pg`. It builds one migrated template database for this run (a
 * unique name, so two runs on one server do not collide); each test file clones its own database
 * from it (`test/helpers/database.ts`), and the template is dropped when ava is done.
 */
import { spawn } from 'node:child_process';
import { loadConfigOrExit } from '../db/platform/config.ts';
import { createLogger } from '../db/platform/log.ts';
import { postgresServer, withMigratedDatabase } from '../db/schema/scratch-database.ts';

const config = loadConfigOrExit();
const log = createLogger('warn');

const server = await postgresServer(config.databaseUrl, 'test-pg', log);
const { adminUrl } = server;
process.stdout.write(
  server.embedded
    ? 'tests use an embedded PostgreSQL (.data/test-pg)\n'
    : 'tests use the server of DATABASE_URL\n',
);

let exitCode: number;
try {
  exitCode = await withMigratedDatabase(adminUrl, 'booking_test', log, (_url, template) =>
    runAva(process.argv.slice(2), { ...process.env, TEST_ADMIN_URL: adminUrl, TEST_TEMPLATE_DB: template }),
  );
} finally {
  await server.stop();
}
process.exit(exitCode);

function runAva(args: string[], env: NodeJS.ProcessEnv): Promise<number> {
  return new Promise((resolve) => {
    const child = spawn('ava', args, { stdio: 'inherit', env });
    child.on('exit', (code, signal) => resolve(code ?? (signal ? 1 : 0)));
  });
}
