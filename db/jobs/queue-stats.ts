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

/**
 * The age of the oldest transaction on the server that holds a transaction id, in seconds (0 when
 * none). Event readers serve only what every such transaction began after has ended before (the
 * snapshot's xmin: db/queries/events.ts), so one left open anywhere on the server holds back the
 * missed-event pull for every partner. The database role sees other roles' transactions when it
 * has pg_read_all_stats (or is a superuser).
 */
export async function oldestTransactionAge(db: Knex): Promise<number> {
  const { rows } = await db.raw<{ rows: { age: number | null }[] }>(
    `select extract(epoch from now() - min(xact_start))::float8 as age
       from pg_stat_activity where backend_xid is not null`,
  );
  return Math.max(0, rows[0]?.age ?? 0);
}
