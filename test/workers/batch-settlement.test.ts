/**
 * How the worker settles a batch: each job completes or fails on its own. A job that failed in a
 * batch used to fail the whole batch, and pg-boss then ran every job of it again.
 */
import test from 'ava';
import { z } from 'zod';
import { startWorkers } from '../../workers/main.ts';
import type { JobHandler } from '../../workers/job-handler.ts';
import { useTestDatabase } from '../helpers/database.ts';
import { waitFor } from '../helpers/wait.ts';

const database = useTestDatabase(test);
const QUEUE = 'test.batch-settlement';

{
  test.serial('one job of a batch failing does not re-run the others', async (t) => {
    const { db, boss, url, log, config } = database();
    const queue = QUEUE;
    await boss.createQueue(queue, { retryLimit: 3, retryDelay: 0 });
    const runs = new Map<number, number>();
    const probe: JobHandler<{ n: number }> = {
      kind: {
        name: queue,
        payload: z.object({ n: z.number() }),
        retry: { limit: 3, delaySeconds: 0, backoff: false },
        expireInSeconds: 15,
        notify: false,
      },
      batchSize: 3,
      pollingIntervalSeconds: 0.5,
      handle({ n }) {
        runs.set(n, (runs.get(n) ?? 0) + 1);
        if (n === 1 && runs.get(n) === 1) return Promise.reject(new Error('a transient failure of job 1'));
        return Promise.resolve();
      },
    };
    // Queued before the worker starts, so its first fetch takes all three as one batch.
    await boss.insert(queue, [{ data: { n: 0 } }, { data: { n: 1 } }, { data: { n: 2 } }]);
    const workers = await startWorkers(config, url, log, { handlers: [probe] });
    t.teardown(() => workers.stop());
    const states = async () =>
      (await db.raw('select state from pgboss.job where name = ?', [queue])).rows.map(
        (r: { state: string }) => r.state,
      );
    await waitFor(async () => (await states()).filter((s: string) => s === 'completed').length === 3);
    t.deepEqual(Object.fromEntries(runs), { 0: 1, 1: 2, 2: 1 }, 'only the failed job ran again');
  });
}
