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
 */
import { register } from 'node:module';
import { basename, dirname } from 'node:path';
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
  const sdk = new NodeSDK({
    // OTEL_SERVICE_NAME when set (the SDK would let a resource given here win over it).
    serviceName: config.tracingServiceName ?? defaultServiceName(process.argv[1]),
    instrumentations: [
      new HttpInstrumentation({
        // The metrics listener's scrapes and probes are not the service's traffic.
        ignoreIncomingRequestHook: (req) => /^\/(metrics|health\/(live|ready))$/.test(req.url ?? ''),
      }),
      new KoaInstrumentation(),
      new PgInstrumentation({ requireParentSpan: true }),
      new UndiciInstrumentation(),
    ],
  });
  sdk.start();
  // A graceful stop (shutdown.ts) sends the spans still buffered before the process exits.
  globalThis.__bookingTracing = sdk;
}

let config;
try {
  config = loadConfig();
} catch (err) {
  // The entry point reports a bad configuration itself, in its own words.
  if (!(err instanceof ConfigError)) throw err;
}
if (config?.tracing) await startTracing(config);
