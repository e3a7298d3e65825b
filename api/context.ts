/** The types every middleware and route shares: per-request state and the app's dependencies. */
import type { ParameterizedContext, Middleware } from 'koa';
import type { PgBoss } from 'pg-boss';
import type { Config } from '../db/platform/config.ts';
import type { Knex } from '../db/postgres/knex.ts';
import type { Logger } from '../db/platform/log.ts';
import type { Metrics } from '../db/platform/metrics.ts';
import type { AuthenticatedRequest } from '../db/queries/api-keys.ts';
import type { StreamHub } from './feed/stream-hub.ts';

/** What a request accumulates on its way through the middleware chain. */
export interface AppState {
  readonly requestId: string;
  /** The request's logger (`request_id`, `partner_id` once authenticated), made on first use. */
  readonly log: Logger;
  /** Set by `authenticate` on keyed routes. */
  auth?: AuthenticatedRequest;
  /** The parsed JSON body, set by `jsonBody` on routes that take one. */
  body?: unknown;
}

export type AppContext = ParameterizedContext<AppState>;
export type AppMiddleware = Middleware<AppState>;

/** What the app is built from; tests build apps on their own databases with these. */
export interface AppDeps {
  db: Knex;
  /** A started pg-boss, for enqueueing jobs inside use-case transactions. */
  boss: PgBoss;
  config: Config;
  log: Logger;
  /** Where requests are counted (absent: a registry nobody serves). */
  metrics?: Metrics;
  /** The process's availability streams; the app makes it (api/feed/stream-hub.ts). */
  streams?: StreamHub;
}
