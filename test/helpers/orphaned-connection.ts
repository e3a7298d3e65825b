/**
 * A process that runs through runAsProcess as web and worker do and holds a database connection
 * with no listener left on it, as pg-boss leaves its LISTEN connection at stop (it removes every
 * listener, then ends it): it logs the connection's backend pid for test/processes.test.ts to end
 * it. With THROW=1 it throws an ordinary error a moment later instead, which must still be fatal.
 */
import pg from 'pg';
import { createLogger } from '../../db/platform/log.ts';
import { runAsProcess } from '../../db/platform/shutdown.ts';

const log = createLogger('info');
await runAsProcess(log, async () => {
  const client = new pg.Client({ connectionString: process.env.DATABASE_URL });
  await client.connect();
  const { rows } = await client.query<{ pid: number }>('select pg_backend_pid() as pid');
  client.removeAllListeners();
  log.info({ backend_pid: rows[0]!.pid }, 'connection orphaned');
  if (process.env.THROW === '1') {
    setTimeout(() => {
      throw new Error('an ordinary bug');
    }, 10);
  }
  const alive = setInterval(() => undefined, 1000); // as web's server or worker's timers keep it running
  return {
    async stop() {
      clearInterval(alive);
      await client.end().catch(() => undefined);
    },
  };
});
