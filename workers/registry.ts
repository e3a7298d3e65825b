/**
 * The one list of job modules. A job module names its queue (declared in `db/jobs/boss.ts`), parses its
 * payload first, and is idempotent, because pg-boss delivers at least once.
 */
import type { LookupFunction } from 'node:net';
import type { Job, PgBoss } from 'pg-boss';
import type { Config } from '../db/platform/config.ts';
import type { z } from 'zod';
import type { Knex } from '../db/postgres/knex.ts';
import type { Logger } from '../db/platform/log.ts';
import { holdExpire } from './hold-expire.ts';
import { webhookDeliver } from './webhook-deliver.ts';
import { waitlistExpire } from './waitlist-expire.ts';
import { waitlistPromote } from './waitlist-promote.ts';
import { webhookFanout } from './webhook-fanout.ts';

/** What a job handler may use. */
export interface JobDeps {
  db: Knex;
  /** A started pg-boss, for jobs that enqueue follow-ups inside their transaction. */
  boss: PgBoss;
  config: Config;
  log: Logger;
  /**
   * The resolver webhook attempts dial through (dns.lookup-compatible; db/platform/host-resolver.ts when absent). Tests
   * inject one to control what a name answers, and when.
   */
  lookup?: LookupFunction;
}

/** One kind of job. */
export interface JobModule<P = unknown> {
  name: string;
  payload: z.ZodType<P>;
  /** How many jobs one fetch takes (DESIGN.md: batches of 10 or more drain thousands per second). */
  batchSize: number;
  /** Seconds between polls; only scheduled (`startAfter`) jobs rely on polling. */
  pollingIntervalSeconds: number;
  /** Independent pollers per worker process, so one slow job does not hold up the others. */
  localConcurrency?: number;
  /** Run the jobs of a batch side by side (each is its own unit of work) rather than in turn. */
  concurrentBatch?: boolean;
  handle(payload: P, deps: JobDeps, job: Job<unknown>): Promise<void>;
}

/** Every job the worker runs. Features add their modules here. */
export const jobs: readonly JobModule[] = [
  holdExpire,
  webhookFanout,
  webhookDeliver,
  waitlistExpire,
  waitlistPromote,
];
