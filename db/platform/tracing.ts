/**
 * Traces (CONTRACT.md, "Traces"): OpenTelemetry, exported over OTLP as the standard `OTEL_*`
 * variables say when an OTLP endpoint is set, and nothing at all otherwise. `preload.ts` starts the
 * SDK before the process imports `pg` and `node:http`, which the instrumentations patch.
 *
 * A request's trace continues through the jobs it causes: `jobTrace()` is what a job payload
 * carries (`trace`: the W3C traceparent and the request id), written by `enqueue()` for jobs sent
 * from TypeScript and by `job_trace()` in SQL for the jobs the database functions send, which read
 * it from the transaction's `booking.trace` setting (`traceSetting()`). A worker runs each job in a
 * span whose parent is the payload's traceparent (`inJobSpan()`), so a hold, its fan-out and every
 * delivery attempt of its events share one trace id.
 *
 * The request id travels the same way whether or not traces are exported, so a worker's log lines
 * name the request that caused their job.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import {
  context,
  isSpanContextValid,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  TraceFlags,
  type Attributes,
  type Context,
} from '@opentelemetry/api';
import { getRPCMetadata, RPCType } from '@opentelemetry/core';
import { z } from 'zod';

/**
 * What a job payload carries of the request (or job) that sent it: our own trace context (never a
 * client's: tracing-preload.ts) and the request id. `tracestate`, which jobs queued by an earlier
 * release may carry, is read and ignored.
 */
export const JobTrace = z.object({
  traceparent: z.string().max(256).optional(),
  tracestate: z.string().max(512).optional(),
  request_id: z.string().max(128).optional(),
});
export type JobTrace = z.infer<typeof JobTrace>;

const requestScope = new AsyncLocalStorage<{ requestId: string }>();

/** Runs `fn` as the work of request `requestId` (the request-id middleware; a job's request). */
export function withRequestId<T>(requestId: string, fn: () => T): T {
  return requestScope.run({ requestId }, fn);
}

/** The trace of the current request or job, for a job it sends; undefined when there is none. */
export function jobTrace(): JobTrace | undefined {
  const traceparent = traceparentOf(context.active());
  const requestId = requestScope.getStore()?.requestId;
  const found: JobTrace = {
    ...(traceparent && { traceparent }),
    ...(requestId && { request_id: requestId }),
  };
  return Object.keys(found).length ? found : undefined;
}

/**
 * The W3C `traceparent` of the span active in `ctx`, or undefined. Written here rather than through
 * the global propagator, which is a no-op so that nothing of a trace crosses the service's edges.
 */
function traceparentOf(ctx: Context): string | undefined {
  const span = trace.getSpanContext(ctx);
  if (!span || !isSpanContextValid(span)) return undefined;
  const flags = (span.traceFlags & TraceFlags.SAMPLED).toString(16).padStart(2, '0');
  return `00-${span.traceId}-${span.spanId}-${flags}`;
}

/** A context whose parent is the span a `traceparent` names (version 00), or the root one. */
function contextOf(traceparent: string | undefined): Context {
  const match = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/.exec(traceparent ?? '');
  if (!match) return ROOT_CONTEXT;
  const parent = {
    traceId: match[1]!,
    spanId: match[2]!,
    traceFlags: parseInt(match[3]!, 16),
    isRemote: true,
  };
  return isSpanContextValid(parent) ? trace.setSpanContext(ROOT_CONTEXT, parent) : ROOT_CONTEXT;
}

/** `jobTrace()` as the text of the `booking.trace` setting SQL's `job_trace()` reads, or null. */
export function traceSetting(): string | null {
  const found = jobTrace();
  return found ? JSON.stringify(found) : null;
}

/**
 * A trace `traceSetting()` wrote, read back from where it was stored (a delivery's `trace`); null
 * for none, or for text that is not one (the work then runs in a trace of its own).
 */
export function parseTraceSetting(text: string | null): JobTrace | null {
  if (text === null) return null;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return null;
  }
  const parsed = JobTrace.safeParse(value);
  return parsed.success ? parsed.data : null;
}

const tracer = () => trace.getTracer('partner-booking');

/**
 * Runs a job in a span `job <kind>` whose parent is the trace its payload carries, and with the
 * payload's request id as the request in scope. Without an exporter the span is a no-op.
 */
export function inJobSpan<T>(
  kind: string,
  payload: unknown,
  attributes: Attributes,
  fn: () => Promise<T>,
): Promise<T> {
  const carried = JobTrace.safeParse((payload as { trace?: unknown } | null)?.trace);
  return inTraceSpan(kind, carried.success ? carried.data : null, attributes, fn);
}

/**
 * `inJobSpan()` for work whose trace was read already (a webhook attempt's, by
 * `parseTraceSetting()` at its claim): the span's parent is `sent`, its request id in scope.
 */
export async function inTraceSpan<T>(
  kind: string,
  sent: JobTrace | null,
  attributes: Attributes,
  fn: () => Promise<T>,
): Promise<T> {
  const parent = contextOf(sent?.traceparent);
  const run = () =>
    tracer().startActiveSpan(
      `job ${kind}`,
      { kind: SpanKind.CONSUMER, attributes: { 'messaging.destination.name': kind, ...attributes } },
      parent,
      async (span) => {
        try {
          return await fn();
        } catch (err) {
          span.setStatus({
            code: SpanStatusCode.ERROR,
            message: err instanceof Error ? err.message : String(err),
          });
          throw err;
        } finally {
          span.end();
        }
      },
    );
  return sent?.request_id ? withRequestId(sent.request_id, run) : run();
}

/** Sets an attribute on the span in progress (a delivery attempt's `webhook.delivery_id`). */
export function setSpanAttribute(name: string, value: string | number | boolean): void {
  trace.getActiveSpan()?.setAttribute(name, value);
}

/**
 * The server span of the request in scope, or undefined. Not the active span: inside Koa's
 * middleware that is the middleware's own span (instrumentation-koa); the HTTP instrumentation keeps
 * its server span in the context's RPC metadata.
 */
function serverSpan() {
  const metadata = getRPCMetadata(context.active());
  return metadata?.type === RPCType.HTTP ? metadata : undefined;
}

/** Sets an attribute on the request's server span (its `booking.request_id`). */
export function setServerSpanAttribute(name: string, value: string): void {
  serverSpan()?.span?.setAttribute(name, value);
}

/**
 * Names the request's server span after its route template and sets `http.route` to it, the
 * template as the OpenAPI document writes it (`/api/v1/bookings/{bookingId}/cancel`). The HTTP
 * instrumentation sets `http.route` from the RPC metadata when the response ends, where the Koa
 * router had put its own spelling (`:bookingId`): ours goes there too.
 */
export function setSpanRoute(method: string, route: string): void {
  const metadata = serverSpan();
  if (!metadata?.span) return;
  metadata.route = route;
  metadata.span.setAttribute('http.route', route);
  metadata.span.updateName(`${method} ${route}`);
}
