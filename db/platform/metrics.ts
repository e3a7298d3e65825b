/**
 * The process's Prometheus metrics (CONTRACT.md, "Metrics and probes"): one registry per process,
 * which `web`, `worker` or both (`npm start`) record into, served by `metrics-server.ts` when
 * METRICS_PORT is set. Names, types and labels are the contract's; no label ever carries an id.
 *
 * Everything is declared when the registry is made, so the first scrape already lists every
 * metric (a counter that has not counted yet shows 0, not nothing). Gauges that describe shared
 * state — the connection pools, the job queues — are read at scrape time from what the process
 * registered with `watchPool()` and `watchQueues()`, never kept up to date on a hot path.
 */
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';

/** A connection pool the process holds: how many connections are lent out, idle, and waited for. */
export interface PoolGauge {
  used(): number;
  idle(): number;
  waiting(): number;
}

/** One queue's counts, as pg-boss reports them, and the age of its oldest job that is due. */
export interface QueueSample {
  queue: string;
  queued: number;
  active: number;
  oldestAgeSeconds: number;
}

/** Request durations: fine below 100 ms, where the API should answer; coarse above. */
const REQUEST_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
/** Webhook attempts are bounded by WEBHOOK_TIMEOUT_MS (10 s by default, at most 600 s). */
const DELIVERY_BUCKETS = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 600];
/** Expiry lag: under a second when workers keep up, minutes when they are down. */
const EXPIRY_LAG_BUCKETS = [0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 300, 900];

const LINT_FAILING_DEFAULTS = [
  'nodejs_active_handles_total',
  'nodejs_active_requests_total',
  'nodejs_active_resources_total',
];

/** The process parts a registry serves the metrics of (`npm start` runs both). */
export type MetricsRole = 'web' | 'worker';

export class Metrics {
  readonly registry = new Registry();
  private readonly pools = new Set<PoolGauge>();
  private queueSampler: (() => Promise<QueueSample[]>) | undefined;
  private horizonSampler: (() => Promise<number>) | undefined;

  readonly requests: Histogram<'method' | 'route' | 'status'>;
  readonly rateLimitRefusals: Counter;
  readonly deliveryAttempts: Counter<'outcome'>;
  readonly deadLetters: Counter;
  readonly deliveryDuration: Histogram;
  readonly holdExpiryLag: Histogram;
  readonly availabilityStreams: Gauge;

  /**
   * A registry serving the metrics of `roles`. The other part's metrics exist all the same, so
   * code both parts share can record, but are registered nowhere: a web process does not show
   * worker metrics that stay 0 there.
   */
  constructor(roles: readonly MetricsRole[] = ['web', 'worker']) {
    const web = roles.includes('web') ? [this.registry] : [];
    const worker = roles.includes('worker') ? [this.registry] : [];
    this.requests = new Histogram({
      name: 'http_server_request_duration_seconds',
      help: 'Duration of HTTP requests to the API, by method, route template and status sent.',
      labelNames: ['method', 'route', 'status'] as const,
      buckets: REQUEST_BUCKETS,
      registers: web,
    });
    this.rateLimitRefusals = new Counter({
      name: 'rate_limit_refusals_total',
      help: 'Requests refused with 429 because their API key had used its rate-limit window.',
      registers: web,
    });
    this.deliveryAttempts = new Counter({
      name: 'webhook_delivery_attempts_total',
      help: 'Webhook delivery attempts made, by outcome (delivered: a 2xx answer).',
      labelNames: ['outcome'] as const,
      registers: worker,
    });
    // Labelled counters start at 0 for every label value, so a rate() has a first point.
    for (const outcome of ['delivered', 'failed']) this.deliveryAttempts.inc({ outcome }, 0);
    this.deadLetters = new Counter({
      name: 'webhook_dead_letters_total',
      help: 'Webhook deliveries that failed their last attempt and became dead letters.',
      registers: worker,
    });
    this.deliveryDuration = new Histogram({
      name: 'webhook_delivery_duration_seconds',
      help: 'Duration of webhook delivery attempts, from connecting to the answer or the failure.',
      buckets: DELIVERY_BUCKETS,
      registers: worker,
    });
    this.holdExpiryLag = new Histogram({
      name: 'hold_expiry_lag_seconds',
      help: "Time from a hold's hold_expiry_at to a worker expiring it.",
      buckets: EXPIRY_LAG_BUCKETS,
      registers: worker,
    });

    this.availabilityStreams = new Gauge({
      name: 'availability_streams_open',
      help: 'Availability streams (Server-Sent Events) this process has open.',
      registers: web,
    });

    const pools = this.pools;
    new Gauge({
      name: 'db_pool_connections',
      help: "Connections of this process's PostgreSQL pools: used (lent out), idle, and waiting (callers queued for one).",
      labelNames: ['state'] as const,
      registers: [this.registry],
      collect() {
        for (const state of ['used', 'idle', 'waiting'] as const) {
          this.set(
            { state },
            [...pools].reduce((sum, pool) => sum + pool[state](), 0),
          );
        }
      },
    });

    // One sampling per scrape feeds both queue gauges: the first collects, the second reuses it.
    const samples = () => this.sampleQueues();
    let pending: Promise<QueueSample[]> | undefined;
    new Gauge({
      name: 'queue_jobs',
      help: 'Jobs per pg-boss queue: queued (due and waiting for a worker) and active (being worked).',
      labelNames: ['queue', 'state'] as const,
      registers: worker,
      async collect() {
        pending = samples();
        for (const sample of await pending) {
          this.set({ queue: sample.queue, state: 'queued' }, sample.queued);
          this.set({ queue: sample.queue, state: 'active' }, sample.active);
        }
      },
    });
    const horizon = () => this.horizonSampler?.().catch(() => undefined) ?? Promise.resolve(undefined);
    new Gauge({
      name: 'db_oldest_transaction_age_seconds',
      help:
        'Age of the oldest transaction on the PostgreSQL server that has written (holds a transaction id); ' +
        'until it ends, GET /events lists nothing recorded after it began (0: none).',
      registers: worker,
      async collect() {
        const age = await horizon();
        if (age !== undefined) this.set(age);
      },
    });
    new Gauge({
      name: 'queue_oldest_job_age_seconds',
      help: 'Per pg-boss queue, how long its oldest queued job has been due (0: none waiting).',
      labelNames: ['queue'] as const,
      registers: worker,
      async collect() {
        for (const sample of await (pending ?? samples())) {
          this.set({ queue: sample.queue }, sample.oldestAgeSeconds);
        }
        pending = undefined;
      },
    });
  }

  /** Where `db_oldest_transaction_age_seconds` reads its age at scrape time (the worker sets it). */
  watchHorizon(sampler: () => Promise<number>): void {
    this.horizonSampler = sampler;
  }

  /** Adds a pool to `db_pool_connections` (a process may hold several: knex's and pg-boss's). */
  watchPool(pool: PoolGauge): void {
    this.pools.add(pool);
  }

  /** Stops counting a pool (its process part stopped). */
  unwatchPool(pool: PoolGauge): void {
    this.pools.delete(pool);
  }

  /** Where the queue gauges read their counts at scrape time (the worker sets it). */
  watchQueues(sampler: () => Promise<QueueSample[]>): void {
    this.queueSampler = sampler;
  }

  /** Adds prom-client's default process and Node.js metrics (for a served registry only: they
   * start an event-loop monitor). */
  collectDefaults(): void {
    collectDefaultMetrics({ register: this.registry });
    // Gauges named like counters, which `promtool check metrics` refuses; the same counts stay
    // as nodejs_active_handles, nodejs_active_requests and nodejs_active_resources (by type).
    for (const name of LINT_FAILING_DEFAULTS) this.registry.removeSingleMetric(name);
  }

  private async sampleQueues(): Promise<QueueSample[]> {
    if (!this.queueSampler) return [];
    // A scrape while the database is away shows the last values rather than failing whole.
    return this.queueSampler().catch(() => []);
  }
}

/** Metrics nobody serves: what a part records into when its process was given no registry. */
export const unserved = new Metrics();
