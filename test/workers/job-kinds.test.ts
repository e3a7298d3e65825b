/**
 * Every kind of job is declared once (db/jobs/kinds.ts): the worker handles exactly the declared
 * kinds, and the queues `npm run migrate` made carry exactly the declared retry policy and expiry.
 */
import test from 'ava';
import { expiryOf, JOB_KINDS } from '../../db/jobs/kinds.ts';
import { handlers } from '../../workers/registry.ts';
import { useTestDatabase } from '../helpers/database.ts';

const database = useTestDatabase(test);

test('the worker handles every declared kind, once, and nothing else', (t) => {
  t.deepEqual(handlers.map((h) => h.kind.name).sort(), JOB_KINDS.map((k) => k.name).sort());
  for (const handler of handlers) t.true(JOB_KINDS.includes(handler.kind), handler.kind.name);
});

test('the queues carry the declared policy', async (t) => {
  const { boss, config } = database();
  for (const kind of JOB_KINDS) {
    const queue = await boss.getQueue(kind.name);
    t.like(
      queue,
      {
        retryLimit: kind.retry.limit,
        retryDelay: kind.retry.delaySeconds,
        retryBackoff: kind.retry.backoff,
        expireInSeconds: expiryOf(kind, config),
      },
      kind.name,
    );
  }
});
