/**
 * How full a process's connection pools are, for `db_pool_connections` (db/platform/metrics.ts):
 * knex's pool (tarn), which requests and jobs wait on, and pg-boss's own pg.Pool, which its
 * fetches, sends and maintenance use.
 */
import type { PgBoss } from 'pg-boss';
import type { Metrics, PoolGauge } from '../platform/metrics.ts';
import type { Knex } from './knex.ts';

interface TarnPool {
  numUsed(): number;
  numFree(): number;
  numPendingAcquires(): number;
}

interface PgPool {
  totalCount: number;
  idleCount: number;
  waitingCount: number;
}

/** The gauge of a knex instance's pool (none until its first connection is asked for). */
function knexPoolGauge(db: Knex): PoolGauge {
  const pool = () => (db.client as { pool?: TarnPool }).pool;
  return {
    used: () => pool()?.numUsed() ?? 0,
    idle: () => pool()?.numFree() ?? 0,
    waiting: () => pool()?.numPendingAcquires() ?? 0,
  };
}

/**
 * The gauge of pg-boss's pool. pg-boss does not expose its pool; its database object keeps a
 * pg.Pool as `pool`, read here by shape so that a pg-boss that stops doing so reads as empty
 * rather than breaking the scrape.
 */
function bossPoolGauge(boss: PgBoss): PoolGauge {
  const pool = (): PgPool | undefined => {
    const candidate = (boss.getDb() as { pool?: Partial<PgPool> }).pool;
    return typeof candidate?.totalCount === 'number' ? (candidate as PgPool) : undefined;
  };
  return {
    used: () => (pool() ? pool()!.totalCount - pool()!.idleCount : 0),
    idle: () => pool()?.idleCount ?? 0,
    waiting: () => pool()?.waitingCount ?? 0,
  };
}

/**
 * Counts a process part's pools (its knex instance and its pg-boss) in `db_pool_connections`
 * until the returned function is called, when the part stops.
 */
export function watchPools(metrics: Metrics, db: Knex, boss: PgBoss): () => void {
  const pools = [knexPoolGauge(db), bossPoolGauge(boss)];
  for (const pool of pools) metrics.watchPool(pool);
  return () => {
    for (const pool of pools) metrics.unwatchPool(pool);
  };
}
