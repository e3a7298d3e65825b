/**
 * `node --import ./db/platform/tracing-preload.ts <entry>` (the `web`, `worker` and `start`
 * scripts): starts OpenTelemetry before the entry point imports anything, because the
 * instrumentations patch `node:http` and `pg` as they load. Without an OTLP endpoint in the
 * environment it loads nothing and the process runs exactly as without it.
 *
 * The SDK configures its exporter from the standard variables (OTEL_EXPORTER_OTLP_PROTOCOL
 * `http/protobuf` or `http/json`, OTEL_EXPORTER_OTLP_HEADERS, OTEL_BSP_*, OTEL_TRACES_SAMPLER …).
 * Instrumented: incoming HTTP (the server span; request-log.ts names it after the route template
 * and sets `http.route`), Koa's middleware and router layers, PostgreSQL queries (pg), and outgoing
 * webhook attempts (undici). `pg` and `node:http` are patched as CommonJS is (require hooks); Koa
 * is imported as an ES module, which only an ESM loader hook can patch: import-in-the-middle's,
 * registered for `koa` alone so that no other module is wrapped.
 *
 * What crosses the service's edges (CONTRACT.md, "Traces"): nothing of a client's trace context is
 * taken in, and nothing of ours is sent out. The global propagator is a no-op, so an incoming
 * request's `traceparent`, `tracestate` and `baggage` are never read (every request starts a new
 * trace, sampled by our sampler, not by the client's flag) and no webhook POST carries a trace
 * header to a partner. Jobs carry their trace in their payloads through tracing.ts, which writes and
 * reads the W3C `traceparent` itself. Query strings are exported with every value redacted, since
 * they carry customers' phones and names (`GET /bookings?customer_phone=…`), and a partner may put
 * a token of its own in its endpoint's (a webhook attempt's span shows neither that nor credentials).
 * Traces only: the SDK would also export the instrumentations' own metrics (a partner's endpoint
 * host among their attributes, every minute, to a collector asked for traces) and logs.
 */
import type { IncomingMessage } from 'node:http';
import { register } from 'node:module';
import type { DiagLogger, Span, TextMapPropagator } from '@opentelemetry/api';
import { basename, dirname } from 'node:path';
import { inspect } from 'node:util';
import { ConfigError, loadConfig, type Config } from './config.ts';

/** OTEL_SERVICE_NAME's default, after the entry point this process runs. */
function defaultServiceName(entry: string | undefined): string {
  if (!entry) return 'partner-booking';
  if (basename(dirname(entry)) === 'workers') return 'partner-booking-worker';
  if (basename(dirname(entry)) === 'api') return 'partner-booking-web';
  return 'partner-booking';
}

async function startTracing(config: Config): Promise<void> {
  register('import-in-the-middle/hook.mjs', import.meta.url, { data: { include: ['koa'] } });
  const [
    { NodeSDK },
    { HttpInstrumentation },
    { KoaInstrumentation },
    { PgInstrumentation },
    { UndiciInstrumentation },
  ] = await Promise.all([
    import('@opentelemetry/sdk-node'),
    import('@opentelemetry/instrumentation-http'),
    import('@opentelemetry/instrumentation-koa'),
    import('@opentelemetry/instrumentation-pg'),
    import('@opentelemetry/instrumentation-undici'),
  ]);
  // OTEL_LOG_LEVEL would make the SDK log through the console, in plain text and multi-line object
  // dumps; the process prints nothing but JSON lines (CONTRACT.md), so its diagnostics become
  // them: the level is taken here, and hidden from the SDK's constructor, which reads it.
  const level = process.env.OTEL_LOG_LEVEL;
  if (level !== undefined) {
    const { diag, DiagLogLevel } = await import('@opentelemetry/api');
    const logLevel =
      DiagLogLevel[level.trim().toUpperCase() as keyof typeof DiagLogLevel] ?? DiagLogLevel.INFO;
    diag.setLogger(jsonDiagnostics(), { logLevel, suppressOverrideMessage: true });
    delete process.env.OTEL_LOG_LEVEL;
  }
  const sdk = new NodeSDK({
    textMapPropagator: NO_PROPAGATION,
    metricReaders: [],
    logRecordProcessors: [],
    // OTEL_SERVICE_NAME when set (the SDK would let a resource given here win over it).
    serviceName: config.tracingServiceName ?? defaultServiceName(process.argv[1]),
    instrumentations: [
      new HttpInstrumentation({
        // The metrics listener's scrapes and probes are not the service's traffic.
        ignoreIncomingRequestHook: (req) => /^\/(metrics|health\/(live|ready))$/.test(req.url ?? ''),
        requestHook: (span, request) => {
          if (!('setHeader' in request)) redactQuery(span, request);
        },
      }),
      new KoaInstrumentation(),
      new PgInstrumentation({ requireParentSpan: true }),
      new UndiciInstrumentation({ startSpanHook: redactedTarget }),
    ],
  });
  if (level !== undefined) process.env.OTEL_LOG_LEVEL = level;
  sdk.start();
  // A graceful stop (shutdown.ts) sends the spans still buffered before the process exits.
  globalThis.__bookingTracing = sdk;
}

/**
 * OpenTelemetry's diagnostics as JSON lines on stdout, in the levels and fields of the service's
 * own log lines (pino's numbers; objects inspected on one line, as their dumps may be circular).
 */
function jsonDiagnostics(): DiagLogger {
  const line =
    (level: number) =>
    (message: string, ...args: unknown[]) => {
      const msg = [
        message,
        ...args.map((a) => (typeof a === 'string' ? a : inspect(a, { depth: 2, breakLength: Infinity }))),
      ].join(' ');
      process.stdout.write(
        `${JSON.stringify({ level, time: Date.now(), pid: process.pid, component: 'opentelemetry', msg })}\n`,
      );
    };
  return { error: line(50), warn: line(40), info: line(30), debug: line(20), verbose: line(10) };
}

/** Reads no trace context from a carrier and writes none into one (see the module comment). */
const NO_PROPAGATION: TextMapPropagator = {
  inject: () => undefined,
  extract: (context) => context,
  fields: () => [],
};

/** A query's parameters' names, each value redacted: `a=REDACTED&b=REDACTED`. */
function redacted(search: string): string {
  const names = [...new URLSearchParams(search).keys()];
  return names.map((name) => `${encodeURIComponent(name)}=REDACTED`).join('&');
}

/** What a server span shows of a request's query. */
function redactQuery(span: Span, request: IncomingMessage): void {
  const search = (request.url ?? '').split('?')[1];
  if (search === undefined) return;
  span.setAttribute('url.query', redacted(search));
}

/**
 * What a webhook attempt's span shows of its endpoint's URL (undici's `url.full` and `url.query`,
 * which keep the `?`): no credentials, each query value redacted.
 */
function redactedTarget(request: { origin: string; path: string }): Record<string, string> {
  let url: URL;
  try {
    url = new URL(request.path, request.origin);
  } catch {
    return {};
  }
  const query = url.search && `?${redacted(url.search)}`;
  return { 'url.full': `${url.protocol}//${url.host}${url.pathname}${query}`, 'url.query': query };
}

let config;
try {
  config = loadConfig();
} catch (err) {
  // The entry point reports a bad configuration itself, in its own words.
  if (!(err instanceof ConfigError)) throw err;
}
if (config?.tracing) await startTracing(config);
