/**
 * The job queues as an operator watches them (`queue_jobs`, `queue_oldest_job_age_seconds`):
 * pg-boss's own counts, which its monitor refreshes every few seconds, and the age of each
 * queue's oldest job that is due but not started, read from the job table. A job scheduled for
 * later (every hold's expiry) is not late until its time: its age counts from when it came due.
 */
import type { PgBoss } from 'pg-boss';
import type { QueueSample } from '../platform/metrics.ts';
import type { Knex } from '../postgres/knex.ts';

/** One sample per queue pg-boss knows. */
export async function sampleQueues(boss: PgBoss, db: Knex): Promise<QueueSample[]> {
  const [queues, ages] = await Promise.all([
    boss.getQueues(),
    // job_i11 (name, …) where state < 'active' serves this: only waiting jobs are read.
    db.raw<{ rows: { name: string; age: number }[] }>(
      `select name, extract(epoch from now() - min(start_after))::float8 as age
         from pgboss.job
        where state < 'active' and start_after <= now()
        group by name`,
    ),
  ]);
  const age = new Map(ages.rows.map((row) => [row.name, Math.max(0, row.age)]));
  return queues.map((queue) => ({
    queue: queue.name,
    queued: queue.readyCount,
    active: queue.activeCount,
    oldestAgeSeconds: age.get(queue.name) ?? 0,
  }));
}
