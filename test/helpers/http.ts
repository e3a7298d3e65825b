/** A real listening app per test (or two, to race), and a small fetch wrapper to call it. */
import type { AddressInfo } from 'node:net';
import { buildApp } from '../../api/app.ts';
import { listen } from '../../api/server.ts';
import type { Route } from '../../api/route.ts';
import type { Config } from '../../db/config.ts';
import type { Knex } from '../../db/knex.ts';
import type { TestFn } from 'ava';
import type { DatabaseHandle, TestDatabase } from './database.ts';

/** A running app. */
export interface TestServer {
  url: string;
  close(): Promise<void>;
}

/** Starts the app on an ephemeral port; `db` lets a test give a second app its own pool. */
export async function startApp(
  database: TestDatabase,
  options: { routes?: readonly Route[]; config?: Config; db?: Knex } = {},
): Promise<TestServer> {
  const app = buildApp(
    {
      db: options.db ?? database.db,
      boss: database.boss,
      config: options.config ?? database.config,
      log: database.log,
    },
    options.routes,
  );
  const server = await listen(app, 0, '127.0.0.1');
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
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
