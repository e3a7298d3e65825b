/**
 * What an operator sees of real `web` and `worker` processes (CONTRACT.md, "Metrics and probes"
 * and "Traces"): the metrics each serves on METRICS_PORT, scraped and parsed after real traffic;
 * the probes there; and the traces they export over OTLP (http/json, to a collector this test
 * runs), where a hold's request, the job of its webhook delivery and the attempt are one trace.
 */
import test, { type ExecutionContext } from 'ava';
import { execFile } from 'node:child_process';
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { promisify } from 'node:util';
import { randomUUID } from 'node:crypto';
import { gridSlots, holdSlot, makeBookingWorld, releaseHold } from './helpers/booking.ts';
import { useTestDatabase } from './helpers/database.ts';
import { makePartner } from './helpers/factories.ts';
import { call, type TestServer } from './helpers/http.ts';
import { startProcess, type Started } from './helpers/processes.ts';
import { waitFor } from './helpers/wait.ts';
import { startReceiver, subscribe } from './helpers/webhooks.ts';

const database = useTestDatabase(test);

/** `script` on this file's database, stopped (exit 0 asserted) when the test ends. */
function start(t: ExecutionContext, script: string, env: Record<string, string> = {}): Started {
  const started = startProcess(script, { DATABASE_URL: database().url, ...env });
  t.teardown(async () => {
    const code = await started.stop();
    if (code !== 0) throw new Error(`${script} exited ${code}:\n${started.output()}`);
  });
  return started;
}

/** The web process as the booking helpers take a server. */
const asServer = (port: number): TestServer => ({
  url: `http://127.0.0.1:${port}`,
  db: database().db,
  close: () => Promise.resolve(),
});

/** One sample of the Prometheus text format. */
interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** The exposition parsed: the samples, and each metric family's TYPE. */
function parseMetrics(text: string): { samples: Sample[]; types: Map<string, string> } {
  const samples: Sample[] = [];
  const types = new Map<string, string>();
  for (const line of text.split('\n')) {
    const type = /^# TYPE (\S+) (\S+)$/.exec(line);
    if (type) types.set(type[1]!, type[2]!);
    if (line === '' || line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match) throw new Error(`not a sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const [, name, value] of (match[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) {
      labels[name!] = value!;
    }
    samples.push({ name: match[1]!, labels, value: Number(match[3]) });
  }
  return { samples, types };
}

async function scrape(port: number) {
  const res = await fetch(`http://127.0.0.1:${port}/metrics`);
  if (res.status !== 200) throw new Error(`scrape: ${res.status}`);
  return { contentType: res.headers.get('content-type'), text: await res.text() };
}

const metricsPort = async (process: Started) => (await process.logLine('metrics listening')).port as number;

/** The label names a family's samples carry (histograms: without `le`). */
const labelNames = (samples: Sample[], family: string) =>
  new Set(
    samples
      .filter((s) => s.name === family || s.name.startsWith(`${family}_`))
      .flatMap((s) => Object.keys(s.labels).filter((l) => l !== 'le')),
  );

test.serial(
  'web and worker serve their metrics and probes on METRICS_PORT, labelled as the contract says',
  async (t) => {
    const { db } = database();
    const world = await makeBookingWorld(db);
    const limited = await makePartner(db, { rateLimit: 1 });
    const web = start(t, 'api/main.ts', { METRICS_PORT: '0' });
    const worker = start(t, 'workers/main.ts', { METRICS_PORT: '0' });
    const [webPort, webMetrics, workerMetrics] = [
      (await web.logLine('web listening')).port as number,
      await metricsPort(web),
      await metricsPort(worker),
    ];
    await worker.logLine('workers started');

    // Before any traffic, every family is declared.
    const first = parseMetrics((await scrape(workerMetrics)).text);
    for (const family of [
      'db_pool_connections',
      'queue_jobs',
      'queue_oldest_job_age_seconds',
      'db_oldest_transaction_age_seconds',
      'webhook_delivery_attempts_total',
      'webhook_dead_letters_total',
      'webhook_delivery_duration_seconds',
      'hold_expiry_lag_seconds',
    ]) {
      t.true(first.types.has(family.replace(/_total$/, '')) || first.types.has(family), family);
    }
    t.like(
      first.samples.find(
        (s) => s.name === 'webhook_delivery_attempts_total' && s.labels.outcome === 'delivered',
      ),
      { value: 0 },
    );

    // Traffic: a delivered webhook, a failed one, a refused key, an unknown path, a hold.
    const server = asServer(webPort);
    let secret = '';
    const receiver = await startReceiver(() => secret);
    t.teardown(() => receiver.close());
    receiver.respond = (request) => (request.event?.event_type === 'hold_created' ? 200 : 500);
    secret = (await subscribe(server, world.apiKey, receiver.url, ['hold_created', 'hold_cancelled'])).secret;
    const held = await holdSlot(server, world);
    await releaseHold(server, world, held.holdId);
    const get = (path: string, key: string) =>
      fetch(`http://127.0.0.1:${webPort}${path}`, { headers: { 'x-api-key': key } });
    t.is((await get('/api/v1/partner/venues', limited.apiKey)).status, 200);
    t.is((await get('/api/v1/partner/venues', limited.apiKey)).status, 429);
    t.is((await get('/api/v1/nowhere/8f14e45f-ceea-467f-a0e6-1b5c3f0d2a77', world.apiKey)).status, 404);
    for (const path of ['/health', '/api/v1/health']) {
      t.is((await fetch(`http://127.0.0.1:${webPort}${path}`)).status, 200, path);
    }
    await waitFor(() => receiver.received.length >= 2);

    const webText = await scrape(webMetrics);
    t.is(webText.contentType, 'text/plain; version=0.0.4; charset=utf-8');
    const webScrape = parseMetrics(webText.text);
    const requests = webScrape.samples.filter((s) => s.name === 'http_server_request_duration_seconds_count');
    t.deepEqual(
      labelNames(webScrape.samples, 'http_server_request_duration_seconds'),
      new Set(['method', 'route', 'status']),
    );
    t.like(
      requests.find((s) => s.labels.route === '/api/v1/bookings/hold'),
      { labels: { method: 'POST', route: '/api/v1/bookings/hold', status: '201' }, value: 1 },
    );
    t.truthy(requests.find((s) => s.labels.route === '/api/v1/partner/holds/{holdId}/cancel'));
    t.like(
      requests.find((s) => s.labels.route === '/api/v1/health'),
      { value: 2 },
      'a route and its unprefixed alias count as one, under the template with its prefix',
    );
    t.false(requests.some((s) => s.labels.route === '/health'));
    t.like(
      requests.find((s) => s.labels.route === 'unmatched'),
      { labels: { status: '404' } },
    );
    t.false(
      requests.some((s) => /[0-9a-f]{8}-[0-9a-f]{4}/.test(s.labels.route!)),
      'no id in a label',
    );
    t.like(
      webScrape.samples.find((s) => s.name === 'rate_limit_refusals_total'),
      { value: 1 },
    );
    const webPool = webScrape.samples.filter((s) => s.name === 'db_pool_connections');
    t.deepEqual(webPool.map((s) => s.labels.state).sort(), ['idle', 'used', 'waiting']);
    t.true(webPool.find((s) => s.labels.state === 'idle')!.value >= 1, 'the pool holds a connection');
    t.true(webScrape.types.has('process_cpu_seconds_total') || webScrape.types.has('process_cpu_seconds'));
    t.false(webScrape.types.has('queue_jobs'), "the worker's metrics are the worker's");
    t.false(first.types.has('http_server_request_duration_seconds'), "the web's metrics are the web's");

    // The worker: one attempt delivered, one failed (and retried later, so no dead letter yet).
    await waitFor(async () => {
      const { samples } = parseMetrics((await scrape(workerMetrics)).text);
      const attempts = (outcome: string) =>
        samples.find((s) => s.name === 'webhook_delivery_attempts_total' && s.labels.outcome === outcome)
          ?.value;
      return attempts('delivered') === 1 && attempts('failed') === 1;
    });
    const workerScrape = parseMetrics((await scrape(workerMetrics)).text);
    const value = (name: string, labels: Record<string, string> = {}) =>
      workerScrape.samples.find(
        (s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v),
      )?.value;
    t.is(value('webhook_delivery_duration_seconds_count'), 2);
    t.is(value('webhook_dead_letters_total'), 0);
    t.deepEqual(labelNames(workerScrape.samples, 'queue_jobs'), new Set(['queue', 'state']));
    t.is(value('queue_jobs', { queue: 'waitlist.promote', state: 'active' }), 0);
    t.is(value('queue_oldest_job_age_seconds', { queue: 'waitlist.promote' }), 0);
    t.is(value('queue_jobs', { queue: 'hold.expire', state: 'queued' }), 0);

    // A transaction left open after a write holds back the missed-event pull: the gauge shows its age.
    const open = await db.transaction();
    try {
      await open.raw('select pg_current_xact_id()');
      await waitFor(async () => {
        const { samples } = parseMetrics((await scrape(workerMetrics)).text);
        return (samples.find((s) => s.name === 'db_oldest_transaction_age_seconds')?.value ?? 0) >= 1;
      });
    } finally {
      await open.rollback();
    }

    // Probes on the metrics port, for both processes.
    for (const port of [webMetrics, workerMetrics]) {
      const live = await fetch(`http://127.0.0.1:${port}/health/live`);
      t.deepEqual([live.status, await live.json()], [200, { status: 'ok' }]);
      const ready = await fetch(`http://127.0.0.1:${port}/health/ready`);
      t.deepEqual([ready.status, await ready.json()], [200, { status: 'ok' }]);
      t.is((await fetch(`http://127.0.0.1:${port}/elsewhere`)).status, 404);
    }

    // Lint-clean for Prometheus's own checker, where it is installed (CI installs it).
    const promtool = await promisify(execFile)('promtool', ['--version']).then(
      () => true,
      () => false,
    );
    if (process.env.REQUIRE_PROMTOOL === '1') t.true(promtool, 'promtool is required here');
    else if (!promtool) t.log('promtool not installed: the lint is skipped (apt-get install prometheus)');
    for (const text of [webText.text, (await scrape(workerMetrics)).text]) {
      if (!promtool) continue;
      const lint = await new Promise<{ code: number | null; output: string }>((resolve) => {
        const child = execFile('promtool', ['check', 'metrics'], (err, stdout, stderr) =>
          resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, output: stdout + stderr }),
        );
        child.stdin!.end(text);
      });
      t.is(lint.code, 0, lint.output);
    }
  },
);

test.serial('a worker waiting for its database is live but not ready on its metrics port', async (t) => {
  const worker = startProcess('workers/main.ts', {
    DATABASE_URL: 'postgres://postgres@127.0.0.1:1/none',
    METRICS_PORT: '0',
  });
  t.teardown(() => worker.stop());
  const port = await metricsPort(worker);
  const live = await fetch(`http://127.0.0.1:${port}/health/live`);
  t.is(live.status, 200);
  const ready = await fetch(`http://127.0.0.1:${port}/health/ready`);
  t.is(ready.status, 503);
  t.like(await ready.json(), { status: 'unavailable' });
});

/** The first value `find` gives that is not undefined, polling (waitFor). */
async function found<T>(find: () => T | undefined): Promise<T> {
  let value: T | undefined;
  await waitFor(() => (value = find()) !== undefined);
  return value!;
}

/** A span as OTLP/JSON carries it, with its service. */
interface ExportedSpan {
  service: string;
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  /** OTLP's SpanKind: 2 is SERVER. */
  kind: number;
  attributes: Record<string, unknown>;
}

/** An OTLP/HTTP collector for http/json: every span exported to it, in memory. */
async function startCollector(): Promise<{
  url: string;
  spans: ExportedSpan[];
  /** Every export request's body as sent, for what must appear nowhere. */
  bodies: string[];
  /** The paths of export requests other than traces' (metrics, logs). */
  others: string[];
  server: Server;
}> {
  const spans: ExportedSpan[] = [];
  const bodies: string[] = [];
  const others: string[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      if (req.url === '/v1/traces') {
        bodies.push(Buffer.concat(chunks).toString('utf8'));
        const body = JSON.parse(bodies.at(-1)!) as OtlpTraces;
        for (const resource of body.resourceSpans ?? []) {
          const service = attributes(resource.resource?.attributes)['service.name'] as string;
          for (const scope of resource.scopeSpans ?? []) {
            for (const span of scope.spans ?? []) {
              spans.push({
                service,
                traceId: span.traceId,
                spanId: span.spanId,
                parentSpanId: span.parentSpanId ?? '',
                name: span.name,
                kind: span.kind ?? 0,
                attributes: attributes(span.attributes),
              });
            }
          }
        }
      } else others.push(req.url ?? '');
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, spans, bodies, others, server };
}

interface OtlpAttribute {
  key: string;
  value: { stringValue?: string; intValue?: string | number; boolValue?: boolean };
}
interface OtlpTraces {
  resourceSpans?: {
    resource?: { attributes?: OtlpAttribute[] };
    scopeSpans?: {
      spans?: {
        traceId: string;
        spanId: string;
        parentSpanId?: string;
        name: string;
        kind?: number;
        attributes?: OtlpAttribute[];
      }[];
    }[];
  }[];
}

function attributes(list: OtlpAttribute[] = []): Record<string, unknown> {
  return Object.fromEntries(
    list.map(({ key, value }) => [key, value.stringValue ?? value.intValue ?? value.boolValue]),
  );
}

test.serial(
  "a hold's request, its delivery job and the attempt are one trace, exported over OTLP",
  async (t) => {
    const { db } = database();
    const world = await makeBookingWorld(db);
    const collector = await startCollector();
    t.teardown(() => new Promise<void>((resolve) => collector.server.close(() => resolve())));
    const otel = {
      OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_BSP_SCHEDULE_DELAY: '100',
    };
    const web = start(t, 'api/main.ts', otel);
    // The worker's name as an operator sets it; the web's is the default.
    const worker = start(t, 'workers/main.ts', { ...otel, OTEL_SERVICE_NAME: 'booking-jobs' });
    const server = asServer((await web.logLine('web listening')).port as number);
    await worker.logLine('workers started');
    let secret = '';
    const receiver = await startReceiver(() => secret);
    t.teardown(() => receiver.close());
    secret = (await subscribe(server, world.apiKey, receiver.url, ['hold_created'])).secret;
    const held = await holdSlot(server, world, { body: {} });
    await waitFor(() => receiver.received.length === 1);
    const deliveryId = receiver.received[0]!.headers['x-delivery-id'] as string;

    const requestSpan = await found(() =>
      collector.spans.find(
        (s) =>
          s.service === 'partner-booking-web' &&
          s.kind === 2 &&
          s.attributes['http.route'] === '/api/v1/bookings/hold',
      ),
    );
    t.is(requestSpan.name, 'POST /api/v1/bookings/hold');
    const attemptSpan = await found(() =>
      collector.spans.find(
        (s) => s.service === 'booking-jobs' && s.attributes['webhook.delivery_id'] === deliveryId,
      ),
    );
    t.is(attemptSpan.name, 'job webhook.deliver');
    t.is(attemptSpan.traceId, requestSpan.traceId, 'the attempt continues the request’s trace');
    // The attempt's own HTTP call (undici) and its queries are children in the same trace.
    const outgoing = await found(() =>
      collector.spans.find(
        (s) => s.parentSpanId === attemptSpan.spanId && s.attributes['url.full'] === receiver.url,
      ),
    );
    t.is(outgoing.traceId, requestSpan.traceId);
    t.true(
      collector.spans.some(
        (s) =>
          s.traceId === requestSpan.traceId &&
          s.service === 'partner-booking-web' &&
          s.name.startsWith('pg.query'),
      ),
      'the hold’s statement is in the trace',
    );
    // Koa's layers (its middleware, then the router's) are spans of the request's trace.
    t.like(
      collector.spans.find((s) => s.traceId === requestSpan.traceId && s.attributes['koa.type'] === 'router'),
      { name: 'router - /api/v1/bookings/hold' },
    );
    // The hold's expiry job carries the same trace, for when it runs.
    const expiry = await db.raw<{
      rows: { data: { trace?: { traceparent?: string; request_id?: string } } }[];
    }>("select data from pgboss.job where name = 'hold.expire' and data->>'hold_id' = ?", [held.holdId]);
    t.is(expiry.rows[0]?.data.trace?.traceparent?.split('-')[1], requestSpan.traceId);
    t.is(expiry.rows[0]?.data.trace?.request_id, held.response.headers.get('x-request-id') ?? undefined);
    // The worker logs the request that caused the job.
    const attemptLine = await worker.logLine('webhook attempt');
    t.is(attemptLine.request_id, held.response.headers.get('x-request-id'));
  },
);

test.serial(
  "every event's deliveries continue the trace of the request that recorded it; no client trace comes in or goes out; no customer data, endpoint token or metric is exported",
  async (t) => {
    const { db } = database();
    const world = await makeBookingWorld(db);
    const brief = await makeBookingWorld(db, { holdSeconds: 2 });
    await db('venue_grants').insert({ partner_id: world.partnerId, venue_id: brief.venueId });
    const collector = await startCollector();
    t.teardown(() => new Promise<void>((resolve) => collector.server.close(() => resolve())));
    const otel = {
      OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_BSP_SCHEDULE_DELAY: '100',
      // Metrics, were they exported, would go out every 200 ms.
      OTEL_METRIC_EXPORT_INTERVAL: '200',
    };
    const web = start(t, 'api/main.ts', otel);
    const worker = start(t, 'workers/main.ts', otel);
    const server = asServer((await web.logLine('web listening')).port as number);
    await worker.logLine('workers started');
    let secret = '';
    const receiver = await startReceiver(() => secret);
    t.teardown(() => receiver.close());
    // A partner may put a token of its own in its endpoint's query.
    secret = (await subscribe(server, world.apiKey, `${receiver.url}?token=endpoint-token-1`)).secret;

    // Every request carries a client's trace context, unsampled, with state and baggage.
    const clientTraceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    const clientTrace = {
      traceparent: `00-${clientTraceId}-00f067aa0ba902b7-00`,
      tracestate: 'client=secret-state',
      baggage: 'customer=9812345678',
    };
    const send = async (method: string, path: string, body?: Record<string, unknown>) => {
      const res = await call(server, method, `/api/v1${path}`, {
        key: world.apiKey,
        headers: clientTrace,
        ...(method === 'POST' && { body: { idempotency_key: randomUUID(), ...body } }),
      });
      t.true(res.status < 300, `${method} ${path}: ${res.status} ${res.text}`);
      return res;
    };
    const slots = await gridSlots(db, world.venueId, world.court);
    const holdAt = (venueId: string, resource: string, start: Date) =>
      send('POST', '/bookings/hold', {
        venue_id: venueId,
        resource_id: resource,
        slot_start: start.toISOString(),
        slot_duration_minutes: 60,
        customer_phone: '9812345678',
      });
    const customer = { payment_reference: 'pay-1', customer_name: 'Asha Rao', customer_phone: '9812345678' };
    // The request that recorded each event, by the event's type and hold.
    const cause = new Map<string, string>();
    const caused = (type: string, holdId: string, res: { headers: Headers }) =>
      cause.set(`${type}/${holdId}`, res.headers.get('x-request-id')!);

    const released = await holdAt(world.venueId, world.court, slots[0]!.slot_start);
    const releasedId = released.body.hold_id as string;
    caused('hold_created', releasedId, released);
    caused('hold_cancelled', releasedId, await send('POST', `/partner/holds/${releasedId}/cancel`));
    const booked = await holdAt(world.venueId, world.court, slots[1]!.slot_start);
    const bookedId = booked.body.hold_id as string;
    caused('hold_created', bookedId, booked);
    const confirmed = await send('POST', '/bookings/confirm', { hold_id: bookedId, ...customer });
    caused('booking_created', bookedId, confirmed);
    const bookingId = confirmed.body.booking_id as string;
    caused('booking_cancelled', bookedId, await send('POST', `/bookings/${bookingId}/cancel`));
    caused('booking_refunded', bookedId, await send('POST', `/bookings/${bookingId}/refund`));
    // A hold left to expire: hold_expired continues the trace of the request that made the hold.
    const briefSlot = (await gridSlots(db, brief.venueId, brief.court))[0]!;
    const expiring = await holdAt(brief.venueId, brief.court, briefSlot.slot_start);
    const expiringId = expiring.body.hold_id as string;
    caused('hold_created', expiringId, expiring);
    caused('hold_expired', expiringId, expiring);
    await send('GET', '/bookings?customer_phone=9812345678&customer_name=Asha%20Rao');
    await send('GET', '/bookings?customer_phone=%2B919812345678&customer_name=Asha+Rao');

    await waitFor(() => receiver.received.length === cause.size, { timeout: 20_000 });

    for (const delivery of receiver.received) {
      const event = delivery.event!;
      const requestId = cause.get(`${event.event_type}/${event.hold_id}`);
      t.truthy(requestId, `a delivery of ${event.event_type} nobody caused`);
      for (const header of ['traceparent', 'tracestate', 'baggage']) {
        t.is(delivery.headers[header], undefined, `${event.event_type} delivered with ${header}`);
      }
      const requestSpan = await found(() =>
        collector.spans.find((s) => s.kind === 2 && s.attributes['booking.request_id'] === requestId),
      );
      t.truthy(requestSpan.attributes['http.route'], 'the server span names its route');
      const attemptSpan = await found(() =>
        collector.spans.find(
          (s) => s.attributes['webhook.delivery_id'] === delivery.headers['x-delivery-id'],
        ),
      );
      t.is(
        attemptSpan.traceId,
        requestSpan.traceId,
        `${event.event_type}: the attempt continues the request's trace`,
      );
      const fanout = collector.spans.filter(
        (s) => s.traceId === requestSpan.traceId && s.service === 'partner-booking-worker',
      );
      t.true(fanout.length > 0, `${event.event_type}: worker spans in the request's trace`);
    }
    // Requests sent unsampled were exported all the same, each in a trace of its own.
    await found(() => (collector.spans.filter((s) => s.kind === 2).length >= 9 ? true : undefined));
    t.false(
      collector.spans.some((s) => s.traceId === clientTraceId),
      "a span carries the client's trace id",
    );
    const exported = collector.bodies.join('\n');
    for (const secretValue of ['9812345678', 'Asha', 'secret-state', clientTraceId, 'endpoint-token-1']) {
      t.false(exported.includes(secretValue), `${secretValue} was exported`);
    }
    // The query string is there, its values redacted.
    t.true(
      collector.spans.some(
        (s) => s.attributes['url.query'] === 'customer_phone=REDACTED&customer_name=REDACTED',
      ),
    );
    // And the attempts' (their endpoint's query), with no credentials.
    t.true(collector.spans.some((s) => s.attributes['url.query'] === '?token=REDACTED'));
    // Traces only: the instrumentations' own metrics (a partner's endpoint host as an attribute) and
    // logs are not exported.
    t.deepEqual(collector.others, []);
  },
);

test.serial(
  'OTEL_LOG_LEVEL=debug: the SDK’s diagnostics are JSON lines too, like everything web prints',
  async (t) => {
    // The SDK logged through the console: plain text, and multi-line dumps of spans and resources.
    const world = await makeBookingWorld(database().db);
    const collector = await startCollector();
    t.teardown(() => new Promise<void>((resolve) => collector.server.close(() => resolve())));
    const web = start(t, 'api/main.ts', {
      OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_BSP_SCHEDULE_DELAY: '100',
      OTEL_LOG_LEVEL: 'debug',
    });
    const server = asServer((await web.logLine('web listening')).port as number);
    await holdSlot(server, world);
    await found(() => collector.spans.find((s) => s.attributes['http.route'] === '/api/v1/bookings/hold'));
    t.is(await web.stop(), 0);
    const lines = web
      .output()
      .split('\n')
      .filter((line) => line !== '');
    const diagnostics = lines.filter((line) => line.includes('"component":"opentelemetry"'));
    t.true(diagnostics.length > 0, 'the SDK said something at debug');
    for (const line of lines) {
      let parsed: Record<string, unknown> | undefined;
      try {
        parsed = JSON.parse(line) as Record<string, unknown>;
      } catch {
        parsed = undefined;
      }
      t.true(typeof parsed?.level === 'number' && typeof parsed.msg === 'string', line.slice(0, 200));
    }
  },
);
