/**
 * What a worker does with one kind of job: the kind it handles (declared in db/jobs/kinds.ts), how
 * it fetches and runs them, and the handler. Kept apart from the registry, the list of handlers, so
 * no handler imports the module that imports it.
 */
import type { LookupFunction } from 'node:net';
import type { Job, PgBoss } from 'pg-boss';
import type { JobKind } from '../db/jobs/kinds.ts';
import type { Config } from '../db/platform/config.ts';
import type { Logger } from '../db/platform/log.ts';
import type { Metrics } from '../db/platform/metrics.ts';
import type { Knex } from '../db/postgres/knex.ts';

/** What a job handler may use. */
export interface JobDeps {
  db: Knex;
  /** A started pg-boss, for jobs that enqueue follow-ups inside their transaction. */
  boss: PgBoss;
  config: Config;
  log: Logger;
  /** Where the handlers count what they do (deliveries, expiry lag); absent: nowhere served. */
  metrics?: Metrics;
  /**
   * The resolver webhook attempts dial through (dns.lookup-compatible; db/platform/host-resolver.ts
   * when absent). Tests inject one to control what a name answers, and when.
   */
  lookup?: LookupFunction;
}

/** How one kind of job is handled. */
export interface JobHandler<P = unknown> {
  kind: JobKind<P>;
  /** How many jobs one fetch takes (DESIGN.md: batches of 10 or more drain thousands per second). */
  batchSize: number;
  /** Seconds between polls; only scheduled (`startAfter`) jobs rely on polling. */
  pollingIntervalSeconds: number;
  /** Does the job's work, idempotently; throws for a failure pg-boss should retry. */
  handle(payload: P, deps: JobDeps, job: Job<unknown>): Promise<void>;
}

/**
 * Thrown by a handler whose job cannot do its work yet but will be able to later (an expiry job
 * that ran before its hold was due): the job fails, pg-boss retries it after its kind's backoff,
 * and the worker logs it as expected rather than as a warning.
 */
export class RetryLaterError extends Error {
  override readonly name = 'RetryLaterError';
}
