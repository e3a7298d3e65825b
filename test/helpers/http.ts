/** A real listening app per test (or two, to race), and a small fetch wrapper to call it. */
import type { StreamHub } from '../../api/feed/stream-hub.ts';
import { once } from 'node:events';
import { connect, type AddressInfo } from 'node:net';
import { buildApp } from '../../api/app.ts';
import { listen, type RequestTimeouts } from '../../api/server.ts';
import type { Route } from '../../api/route.ts';
import type { Config } from '../../db/platform/config.ts';
import type { Knex } from '../../db/postgres/knex.ts';
import type { TestFn } from 'ava';
import type { DatabaseHandle, TestDatabase } from './database.ts';

/** A running app, and the pool it runs on (for helpers that read what the app reads). */
export interface TestServer {
  url: string;
  db: Knex;
  close(): Promise<void>;
  /** The connections the server holds open now (an app of this process only). */
  connections?: () => Promise<number>;
}

/** Starts the app on an ephemeral port; `db` lets a test give a second app its own pool. */
export async function startApp(
  database: TestDatabase,
  options: {
    routes?: readonly Route[];
    config?: Config;
    db?: Knex;
    streams?: StreamHub;
    timeouts?: RequestTimeouts;
  } = {},
): Promise<TestServer> {
  const db = options.db ?? database.db;
  const app = buildApp(
    {
      db,
      boss: database.boss,
      config: options.config ?? database.config,
      log: database.log,
      ...(options.streams ? { streams: options.streams } : {}),
    },
    options.routes,
  );
  const server = await listen(app, 0, '127.0.0.1', options.timeouts);
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    db,
    connections: () =>
      new Promise((resolve, reject) => server.getConnections((err, n) => (err ? reject(err) : resolve(n)))),
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** One app for the whole test file, on the file's database: call the getter inside tests. */
export function useTestServer<C>(
  test: TestFn<C>,
  database: DatabaseHandle,
  options: Parameters<typeof startApp>[1] = {},
): () => TestServer {
  let server: TestServer | undefined;
  test.before(async () => {
    server = await startApp(await database.ready(), options);
  });
  test.after.always(() => server?.close());
  return () => {
    if (!server) throw new Error('the test server is not ready');
    return server;
  };
}

/** How to call: an API key, a JSON body (or a raw one), extra headers. */
export interface CallOptions {
  key?: string;
  body?: unknown;
  rawBody?: string | Buffer;
  headers?: Record<string, string>;
}

/** A response with its body parsed when it is JSON. */
export interface CallResult {
  status: number;
  headers: Headers;
  body: any;
  text: string;
}

/** Calls `method path` on a test server. */
export async function call(
  server: TestServer,
  method: string,
  path: string,
  options: CallOptions = {},
): Promise<CallResult> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.key !== undefined) headers['x-api-key'] = options.key;
  let body: string | Buffer | undefined = options.rawBody;
  if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    headers['content-type'] ??= 'application/json';
  }
  const response = await fetch(server.url + path, { method, headers, body: body ?? null });
  const text = await response.text();
  let parsed: unknown;
  if (response.headers.get('content-type')?.includes('application/json')) parsed = JSON.parse(text);
  return { status: response.status, headers: response.headers, body: parsed, text };
}

/**
 * A request written byte for byte, for what `call()` (fetch) refuses or rewrites: a U+0000 or a
 * repeated header, a malformed percent-escape in the target, any body under any content type.
 */
export interface RawRequest {
  method: string;
  /** Path and query, sent exactly as given (percent-encode it yourself). */
  target: string;
  /** Header lines in order, written as latin1 bytes; Host, Connection and Content-Length are added. */
  headers?: readonly (readonly [string, string])[];
  body?: string | Buffer;
}

/** How long a raw request may take before it counts as hung. */
const RAW_TIMEOUT_MS = 15_000;

/** Sends `request` over its own connection (Connection: close) and parses the answer. */
export async function rawCall(server: TestServer, request: RawRequest): Promise<CallResult> {
  const { hostname, port } = new URL(server.url);
  const body = typeof request.body === 'string' ? Buffer.from(request.body, 'utf8') : request.body;
  const lines = [`${request.method} ${request.target} HTTP/1.1`, `Host: ${hostname}:${port}`];
  for (const [name, value] of request.headers ?? []) lines.push(`${name}: ${value}`);
  if (body) lines.push(`Content-Length: ${body.length}`);
  lines.push('Connection: close', '', '');
  const head = Buffer.from(lines.join('\r\n'), 'latin1');
  const socket = connect(Number(port), hostname);
  const chunks: Buffer[] = [];
  socket.on('data', (chunk: Buffer) => {
    chunks.push(chunk);
    // An event stream never ends by itself: once its first event is in, that is the answer.
    const seen = Buffer.concat(chunks);
    const head = seen.indexOf('\r\n\r\n');
    if (head >= 0 && /content-type: text\/event-stream/i.test(seen.subarray(0, head).toString('latin1'))) {
      if (/\nevent: [^\n]*\ndata: [^\n]*\n\n/.test(seen.subarray(head).toString('utf8'))) socket.destroy();
    }
  });
  socket.setTimeout(RAW_TIMEOUT_MS, () => socket.destroy(new Error(`no answer within ${RAW_TIMEOUT_MS} ms`)));
  socket.write(body ? Buffer.concat([head, body]) : head);
  // The server may answer and close before it has read a body it refuses (413): that is an answer.
  socket.on('error', () => undefined);
  await once(socket, 'close');
  return parseResponse(Buffer.concat(chunks));
}

/** Parses an HTTP/1.1 response: status line, headers, a Content-Length or chunked body. */
function parseResponse(raw: Buffer): CallResult {
  const end = raw.indexOf('\r\n\r\n');
  if (end < 0) throw new Error(`no HTTP response (got ${raw.length} bytes)`);
  const [statusLine = '', ...headerLines] = raw.subarray(0, end).toString('latin1').split('\r\n');
  const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine)?.[1]);
  if (!status) throw new Error(`malformed status line: ${statusLine}`);
  const headers = new Headers();
  for (const line of headerLines) {
    const colon = line.indexOf(':');
    headers.append(line.slice(0, colon).trim(), line.slice(colon + 1).trim());
  }
  let payload = raw.subarray(end + 4);
  if (headers.get('transfer-encoding')?.includes('chunked')) payload = unchunk(payload);
  else if (headers.has('content-length'))
    payload = payload.subarray(0, Number(headers.get('content-length')));
  const text = payload.toString('utf8');
  let body: unknown;
  if (headers.get('content-type')?.includes('application/json')) {
    try {
      body = JSON.parse(text);
    } catch {
      body = undefined;
    }
  }
  return { status, headers, body, text };
}

function unchunk(data: Buffer): Buffer {
  const parts: Buffer[] = [];
  let at = 0;
  for (;;) {
    const lineEnd = data.indexOf('\r\n', at);
    const size = parseInt(data.subarray(at, lineEnd).toString('latin1'), 16);
    if (!(size > 0)) return Buffer.concat(parts);
    parts.push(data.subarray(lineEnd + 2, lineEnd + 2 + size));
    at = lineEnd + 2 + size + 2;
  }
}
