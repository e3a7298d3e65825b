/**
 * Helpers for the availability feed: polls, an SSE client over node:http that parses every frame
 * as it arrives (ids, event types, JSON data, comments), and running an operator command in-process.
 */
import { request, type IncomingMessage } from 'node:http';
import type { Knex } from '../../db/postgres/knex.ts';
import { parseCommandLine } from '../../db/cli/main.ts';
import { call, type CallResult, type TestServer } from './http.ts';
import { waitFor } from './wait.ts';

/** GET /slots/availability/changes. */
export function poll(
  server: TestServer,
  apiKey: string,
  query: Record<string, string | number | undefined>,
): Promise<CallResult> {
  const params = new URLSearchParams(
    Object.entries(query)
      .filter(([, v]) => v !== undefined)
      .map(([k, v]): [string, string] => [k, String(v)]),
  );
  return call(server, 'GET', `/api/v1/slots/availability/changes?${params.toString()}`, { key: apiKey });
}

/** The `changes_cursor` of GET /slots/availability for a venue-local date. */
export async function snapshotCursor(
  server: TestServer,
  apiKey: string,
  venueId: string,
  date: string,
): Promise<string> {
  const res = await call(server, 'GET', `/api/v1/slots/availability?venue_id=${venueId}&date=${date}`, {
    key: apiKey,
  });
  if (res.status !== 200) throw new Error(`availability: ${res.status} ${res.text}`);
  return res.body.changes_cursor as string;
}

/** Polls from `after` until a page is not full; every event, and the cursor to poll from next. */
export async function pollAll(
  server: TestServer,
  apiKey: string,
  venueId: string,
  after: string,
  extra: Record<string, string> = {},
): Promise<{ events: Record<string, unknown>[]; next: string }> {
  const events: Record<string, unknown>[] = [];
  let next = after;
  for (;;) {
    const res = await poll(server, apiKey, { venue_id: venueId, after: next, limit: 500, ...extra });
    if (res.status !== 200) throw new Error(`poll: ${res.status} ${res.text}`);
    events.push(...(res.body.data as Record<string, unknown>[]));
    next = res.body.next_after as string;
    if (!res.body.has_more) return { events, next };
  }
}

/** One frame of an event stream: an event (id, type, data) or a comment. */
export interface Frame {
  id?: string;
  event?: string;
  data?: Record<string, unknown>;
  comment?: string;
  retry?: number;
}

/** An open event stream, its frames as they come. */
export interface OpenStream {
  status: number;
  headers: IncomingMessage['headers'];
  /** The body when the answer is not a stream (a refusal). */
  body?: Record<string, unknown>;
  frames: Frame[];
  events(): Frame[];
  ended: Promise<void>;
  close(): void;
  /** Stops reading the socket (a client that stalls). */
  pause(): void;
  /** Reads it again. */
  resume(): void;
}

/**
 * Opens GET /slots/availability/stream (a parameter given as a list is sent once per value);
 * resolves once the status and headers are in.
 */
export function openStream(
  server: TestServer,
  apiKey: string,
  query: Record<string, string | string[]>,
  headers: Record<string, string> = {},
): Promise<OpenStream> {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) {
    for (const one of [value].flat()) params.append(name, one);
  }
  const url = new URL(`${server.url}/api/v1/slots/availability/stream?${params.toString()}`);
  return new Promise((resolve, reject) => {
    const req = request(url, { headers: { 'x-api-key': apiKey, ...headers } }, (res) => {
      const frames: Frame[] = [];
      let buffer = '';
      let resolveEnded: () => void;
      const ended = new Promise<void>((r) => (resolveEnded = r));
      const stream: OpenStream = {
        status: res.statusCode!,
        headers: res.headers,
        frames,
        events: () => frames.filter((f) => f.event !== undefined),
        ended,
        close: () => req.destroy(),
        pause: () => res.pause(),
        resume: () => res.resume(),
      };
      res.setEncoding('utf8');
      if (!String(res.headers['content-type']).startsWith('text/event-stream')) {
        res.on('data', (chunk: string) => (buffer += chunk));
        res.on('end', () => {
          stream.body = JSON.parse(buffer) as Record<string, unknown>;
          resolveEnded();
          resolve(stream);
        });
        return;
      }
      res.on('data', (chunk: string) => {
        buffer += chunk;
        let end: number;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          frames.push(parseFrame(buffer.slice(0, end)));
          buffer = buffer.slice(end + 2);
        }
      });
      res.on('end', () => resolveEnded());
      res.on('close', () => resolveEnded());
      res.on('error', () => resolveEnded());
      resolve(stream);
    });
    req.on('error', reject);
    req.end();
  });
}

function parseFrame(text: string): Frame {
  const frame: Frame = {};
  for (const line of text.split('\n')) {
    if (line.startsWith(':')) frame.comment = line.slice(1).trim();
    else if (line.startsWith('id: ')) frame.id = line.slice(4);
    else if (line.startsWith('event: ')) frame.event = line.slice(7);
    else if (line.startsWith('data: ')) frame.data = JSON.parse(line.slice(6)) as Record<string, unknown>;
    else if (line.startsWith('retry: ')) frame.retry = Number(line.slice(7));
  }
  return frame;
}

/** The ids of the events a stream sent after its first (`hello`): the cursors it delivered. */
export function idsAfterHello(stream: OpenStream): (string | undefined)[] {
  return stream
    .events()
    .slice(1)
    .map((f) => f.id);
}

/** Waits until the stream has at least `count` events. */
export function eventsArrive(stream: OpenStream, count: number, timeout = 10_000): Promise<void> {
  return waitFor(() => stream.events().length >= count, { timeout });
}

/** Runs an operator command in one transaction, as `npm run ops` does; its JSON answer. */
export async function ops(db: Knex, ...argv: string[]): Promise<Record<string, unknown>> {
  const { command, flags } = parseCommandLine(argv);
  return db.transaction<Record<string, unknown>>((trx) => command.run(trx, flags));
}
