/**
 * `npm test`'s database step, then ava. Uses DATABASE_URL's server when set, otherwise an embedded
 * PostgreSQL under `.data/test-pg`. It builds one migrated template database for this run (a
 * unique name, so two runs on one server do not collide); each test file clones its own database
 * from it (`test/helpers/database.ts`), and the template is dropped when ava is done.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { loadConfigOrExit } from '../db/config.ts';
import { dropDatabase, ensureDatabase, withDatabase } from '../db/database-url.ts';
import { startEmbeddedPostgres, type EmbeddedServer } from '../db/embedded.ts';
import { createLogger } from '../db/log.ts';
import { migrate } from '../db/migrate.ts';

const config = loadConfigOrExit();
const log = createLogger('warn');

let embedded: EmbeddedServer | undefined;
let adminUrl = config.databaseUrl;
if (!adminUrl) {
  embedded = await startEmbeddedPostgres('test-pg', log);
  adminUrl = embedded.adminUrl;
  process.stdout.write('tests use an embedded PostgreSQL (.data/test-pg)\n');
} else {
  process.stdout.write(`tests use the server of DATABASE_URL\n`);
}

const template = `booking_test_${randomBytes(4).toString('hex')}`;
let exitCode: number;
try {
  await ensureDatabase(adminUrl, template);
  await migrate(withDatabase(adminUrl, template), log);
  exitCode = await runAva(process.argv.slice(2), {
    ...process.env,
    TEST_ADMIN_URL: adminUrl,
    TEST_TEMPLATE_DB: template,
  });
} finally {
  await dropDatabase(adminUrl, template).catch(() => undefined);
  await embedded?.stop();
}
process.exit(exitCode);

function runAva(args: string[], env: NodeJS.ProcessEnv): Promise<number> {
  return new Promise((resolve) => {
    const child = spawn('ava', args, { stdio: 'inherit', env });
    child.on('exit', (code, signal) => resolve(code ?? (signal ? 1 : 0)));
  });
}
