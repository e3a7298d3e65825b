/**
 * The operator's listener on METRICS_PORT (CONTRACT.md, "Metrics and probes"): `GET /metrics` in
 * the Prometheus text format, `/health/live` and `/health/ready`, unauthenticated, apart from the
 * public API port so that neither the scrape nor the probes can be reached through the API's load
 * balancer. `web`, `worker` and `npm start` each open one.
 *
 * It listens before the process has a database, so an orchestrator sees the process live while it
 * waits for PostgreSQL; readiness says why it is not ready yet until a part registers its check.
 */
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Config } from './config.ts';
import type { Logger } from './log.ts';
import type { Metrics } from './metrics.ts';

/** Why a process that listens but has no database yet is not ready (here and on PORT). */
export const STARTING = 'starting: waiting for the database';

/** Why the process cannot serve yet, or undefined when it can. */
export type ReadinessCheck = () => Promise<string | undefined>;

/**
 * What `/health/ready` answers for a readiness `reason` (undefined: ready), here and on PORT
 * (api/routes/health.ts).
 */
export function readyAnswer(reason: string | undefined): {
  status: 200 | 503;
  body: { status: 'ok' } | { status: 'unavailable'; reason: string };
} {
  return reason
    ? { status: 503, body: { status: 'unavailable', reason } }
    : { status: 200, body: { status: 'ok' } };
}

/** A listening metrics server. */
export interface MetricsServer {
  port: number;
  /** Sets what `/health/ready` asks (the process's database, once it has one). */
  setReadiness(check: ReadinessCheck): void;
  stop(): Promise<void>;
}

/** The process's metrics server when METRICS_PORT is set; undefined otherwise. */
export async function serveMetricsIfAsked(
  config: Config,
  metrics: Metrics,
  log: Logger,
): Promise<MetricsServer | undefined> {
  return config.metricsPort === undefined ? undefined : serveMetrics(metrics, config.metricsPort, log);
}

/** Serves `metrics` (with the default process metrics added) on `port` of every interface. */
export async function serveMetrics(metrics: Metrics, port: number, log: Logger): Promise<MetricsServer> {
  metrics.collectDefaults();
  let readiness: ReadinessCheck = () => Promise.resolve(STARTING);
  const server = createServer((req, res) => {
    answer(req, res, metrics, readiness).catch((err: unknown) => {
      log.warn({ err: err instanceof Error ? err.message : String(err) }, 'metrics request failed');
      if (!res.headersSent) send(res, 500, 'text/plain; charset=utf-8', 'metrics unavailable\n');
      else res.destroy();
    });
  });
  server.listen(port, '0.0.0.0');
  await once(server, 'listening');
  const address = server.address();
  const bound = typeof address === 'object' && address ? address.port : port;
  log.info({ port: bound }, 'metrics listening');
  return {
    port: bound,
    setReadiness(check) {
      readiness = check;
    },
    stop: () => close(server),
  };
}

async function answer(
  req: IncomingMessage,
  res: ServerResponse,
  metrics: Metrics,
  readiness: ReadinessCheck,
): Promise<void> {
  const path = (req.url ?? '/').split('?')[0];
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    res.setHeader('Allow', 'GET, HEAD');
    return json(res, 405, { status: 'method_not_allowed' });
  }
  switch (path) {
    case '/metrics':
      return send(res, 200, metrics.registry.contentType, await metrics.registry.metrics());
    case '/health/live':
      return json(res, 200, { status: 'ok' });
    case '/health/ready': {
      const { status, body } = readyAnswer(await readiness());
      return json(res, status, body);
    }
    default:
      return json(res, 404, { status: 'not_found' });
  }
}

function json(res: ServerResponse, status: number, body: object): void {
  send(res, status, 'application/json; charset=utf-8', JSON.stringify(body));
}

function send(res: ServerResponse, status: number, type: string, body: string): void {
  res.writeHead(status, { 'Content-Type': type, 'Cache-Control': 'no-store' });
  res.end(body);
}

async function close(server: Server): Promise<void> {
  const closed = once(server, 'close');
  server.close();
  server.closeAllConnections();
  await closed;
}
