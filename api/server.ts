/**
 * The HTTP server around the Koa app, for `npm run web`, `npm start` and the tests alike: how it
 * listens, how it refuses what it cannot read, and how it stops.
 *
 * Node's parser refuses some requests before any middleware sees them (a U+0000 or other control
 * character in a header, a malformed request line, headers over 16 KiB) and would answer with a
 * bare `400 Bad Request`; here they get the spec's error body like every other refusal, so a client
 * never has to parse two kinds of error.
 */
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { createServer, IncomingMessage, ServerResponse, STATUS_CODES, type Server } from 'node:http';
import { Server as NetServer, Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import type { App } from './app.ts';
import { API_PREFIX } from './route.ts';
import { readyAnswer, STARTING } from '../db/platform/metrics-server.ts';
import {
  HeadersTooLargeError,
  RequestTimeoutError,
  ServiceUnavailableError,
  type DomainErrorClass,
} from './errors.ts';
import { errorBody, statusOf } from './middleware/errors.ts';
import { markUnreadableHeader, unreadableHeaderError } from './middleware/http-headers.ts';
import { failBody } from './middleware/json-body.ts';
import { readRefusedHead, refusedHeader, sentRequestId, type RefusedHead } from './refused-head.ts';

/** A client must send a whole request within this (slow-loris protection), headers within the next. */
const REQUEST_TIMEOUT_MS = 30_000;
const HEADERS_TIMEOUT_MS = 20_000;
/** How often Node looks for requests past those (its default, 30 s, could double the wait). */
const TIMEOUT_CHECK_MS = 5_000;

/** How long a client may take to send a request, and how often Node checks (tests shorten them). */
export interface RequestTimeouts {
  requestMs: number;
  headersMs: number;
  checkMs: number;
}

const TIMEOUTS: RequestTimeouts = {
  requestMs: REQUEST_TIMEOUT_MS,
  headersMs: HEADERS_TIMEOUT_MS,
  checkMs: TIMEOUT_CHECK_MS,
};

/** Creates the server for `app` and listens on `port` (0: any free port) of `host`. */
export async function listen(
  app: App,
  port: number,
  host: string,
  timeouts: RequestTimeouts = TIMEOUTS,
): Promise<Server> {
  const listening = await listenStarting(port, host, { sandbox: true, timeouts });
  listening.serve(app);
  return listening.server;
}

/** A server listening before its app can serve (`web` waiting for its database), and its switch. */
export interface StartingServer {
  server: Server;
  /** From now on `app` answers every request. */
  serve: (app: App) => void;
  /** Why it is not ready yet, from now on (at first: waiting for the database). */
  notReady: (reason: string) => void;
}

/**
 * Listens on `port` of `host` at once, answering as a process still starting until `serve(app)`:
 * `/health/live` 200 (the process runs), `/health/ready` and `/health` 503 saying why, anything
 * else `503 SERVICE_UNAVAILABLE` with `Retry-After`. An orchestrator probing PORT sees the process
 * live while it waits for PostgreSQL and its migrations, as on METRICS_PORT, instead of a refused
 * connection.
 */
export async function listenStarting(
  port: number,
  host: string,
  { sandbox, timeouts = TIMEOUTS }: { sandbox: boolean; timeouts?: RequestTimeouts },
): Promise<StartingServer> {
  let reason = STARTING;
  let handle: Handler = (req, res) => Promise.resolve(answerStarting(req, res, sandbox, reason));
  // Node would answer a missing Host itself, with a bare 400: the app refuses it with the error body.
  const options = {
    requestTimeout: timeouts.requestMs,
    connectionsCheckingInterval: timeouts.checkMs,
    requireHostHeader: false,
  };
  const server = createServer(options, (req, res) => void handle(req, res));
  server.headersTimeout = timeouts.headersMs;
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex) =>
    answerUnparsable(err, socket, handle),
  );
  // What Node would otherwise answer on its own, or not at all, goes to the app like any request:
  // an Expect other than 100-continue (Node: a bare 417) is ignored, as RFC 9110 allows, and a
  // CONNECT (Node: the connection dropped unanswered) is a route the service does not have.
  server.on('checkExpectation', (req: IncomingMessage, res: ServerResponse) => void handle(req, res));
  server.on('connect', (req: IncomingMessage, socket: Duplex) =>
    afterResponses(socket, () =>
      socket instanceof Socket ? answerThroughApp(req, socket, handle) : socket.destroy(),
    ),
  );
  server.listen(port, host);
  await once(server, 'listening');
  return {
    server,
    serve: (app) => {
      handle = app.callback();
    },
    notReady: (why) => {
      reason = why;
    },
  };
}

/** The one route that answers 200 while the process cannot serve yet: the others answer 503. */
export const LIVE_WHILE_STARTING = '/health/live';

/** The answers of a process that listens but cannot serve yet, for `reason`. */
function answerStarting(req: IncomingMessage, res: ServerResponse, sandbox: boolean, reason: string): void {
  const path = (req.url ?? '/').split('?')[0]!;
  const route = path.startsWith(`${API_PREFIX}/`) ? path.slice(API_PREFIX.length) : path;
  const requestId = randomUUID();
  let status: number;
  let body: unknown;
  if (route === LIVE_WHILE_STARTING) [status, body] = [200, { status: 'ok' }];
  else if (route === '/health/ready') ({ status, body } = readyAnswer(reason));
  else if (route === '/health') {
    [status, body] = [503, { status: 'unavailable', sandbox, timestamp: new Date().toISOString() }];
  } else {
    const err = new ServiceUnavailableError();
    [status, body] = [statusOf(ServiceUnavailableError), errorBody(err, requestId)];
    res.setHeader('Retry-After', String(err.retryAfterSeconds));
  }
  res.writeHead(status, { 'Content-Type': 'application/json; charset=utf-8', 'X-Request-Id': requestId });
  res.end(req.method === 'HEAD' ? undefined : JSON.stringify(body));
}

/** How long connections accepted just before a stop get to deliver their request. */
const ACCEPTED_GRACE_MS = 1_000;
/**
 * How long a stop waits for its streams' places to be freed: with the database gone the frees
 * would wait for a connection until the drain timeout, and web must still exit within 10 s
 * (CONTRACT.md); a place not freed is freed by the 60-s rule for a dead process's streams.
 */
const STREAM_PLACES_WAIT_MS = 5_000;

/**
 * Stops `server` gracefully: no new connection is accepted; a connection accepted just before
 * still gets its request answered (http.Server.close() would close it at once as "idle", cutting
 * off a request already on its way); open availability streams end at once; every request in
 * flight is answered, its connection then
 * closed; idle keep-alive connections are closed after a grace period; after `drainTimeoutMs`
 * whatever is left is cut. Resolves when no handler runs any more, or `drainTimeoutMs` after it
 * began, whichever comes first: one deadline for the whole drain, so that web exits within 10 s.
 */
export async function closeGracefully(server: Server, app: App, drainTimeoutMs: number): Promise<void> {
  const gaveUp = sleep(drainTimeoutMs, undefined, { ref: false });
  app.drain();
  // Availability streams never finish by themselves: they end now, sending nothing more. Their
  // places are freed before the pool closes (below).
  const streamsFreed = Promise.race([
    app.endStreams(),
    sleep(STREAM_PLACES_WAIT_MS, undefined, { ref: false }),
  ]);
  const closed = once(server, 'close');
  // net.Server's close: stop listening, but leave the accepted connections to finish.
  NetServer.prototype.close.call(server);
  const cutOff = setTimeout(() => server.closeAllConnections(), drainTimeoutMs);
  for (let waited = 0; waited < ACCEPTED_GRACE_MS && (await connections(server)) > 0; waited += 50) {
    await sleep(50);
  }
  server.closeIdleConnections();
  await closed;
  // A socket can close before its handler finishes (a client hanging up, or cut at the deadline
  // while its statement waits on a database that does not answer); wait for those too, and for the
  // streams' places (at most STREAM_PLACES_WAIT_MS), but not past the drain's deadline: then the
  // caller closes the pool under them.
  await Promise.race([Promise.all([app.idle(), streamsFreed]), gaveUp]);
  clearTimeout(cutOff);
}

function connections(server: Server): Promise<number> {
  return new Promise((resolve) => server.getConnections((err, count) => resolve(err ? 0 : count)));
}

/** What Koa's `app.callback()` returns: the app as a request listener. */
type Handler = (req: IncomingMessage, res: ServerResponse) => Promise<void>;

/**
 * Answers a request Node could not parse with the spec's error body, then closes the connection.
 * One refused for a header (a U+0000 or another control character in it) whose whole head Node
 * read is replayed through the app instead, so authentication and the rate limit judge it first.
 */
function answerUnparsable(
  err: NodeJS.ErrnoException & { rawPacket?: Buffer },
  socket: Duplex,
  handle: Handler,
): void {
  // The rest of a request already answered (its body, arriving after the headers that failed) fails
  // to parse again, chunk by chunk. Destroying the socket then would reset the connection, and a
  // client still sending would lose the answer waiting in its buffer: the bytes are read and
  // dropped instead until the client closes, or LINGER_MS after the answer (a lingering close).
  if (answered.has(socket)) return;
  if (!socket.writable || err.code === 'ECONNRESET') {
    socket.destroy();
    return;
  }
  answered.add(socket);
  // A request whose body can never complete now (the client stopped sending it, closed its side
  // halfway through, or sent bytes that do not parse): the refusal is that request's. Reading its
  // body fails with it, now if the app is reading it, or when it starts to (json-body.ts: 408 or
  // 400), and its one answer closes the connection, whatever the route answers (a 401 before any
  // reading). Waiting for its response first, as below, would wait for ever on a body being read.
  const current = (socket as Duplex & { _httpMessage?: ServerResponse | null })._httpMessage;
  if (current && !current.req.complete) {
    current.shouldKeepAlive = false;
    failBody(current.req, err);
    return;
  }
  // Requests pipelined before it are answered first, in order, as HTTP/1.1 requires.
  afterResponses(socket, () => refuse(err, socket, handle));
}

/** The refusal itself, once no earlier response is being written on `socket`. */
function refuse(err: NodeJS.ErrnoException & { rawPacket?: Buffer }, socket: Duplex, handle: Handler): void {
  const head = err.code === 'HPE_INVALID_HEADER_TOKEN' ? readRefusedHead(err.rawPacket) : undefined;
  // A key holding the refused character cannot be read, let alone authenticated: refused as it is.
  if (head && head.refused !== 'x-api-key' && socket instanceof Socket) {
    replay(head, socket, handle);
    return;
  }
  const refusal =
    err.code === 'HPE_HEADER_OVERFLOW'
      ? new HeadersTooLargeError()
      : err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? new RequestTimeoutError()
        : unreadableHeaderError(head?.refused ?? refusedHeader(err.rawPacket) ?? '');
  const status = statusOf(refusal.constructor as DomainErrorClass);
  // From the refused request's own head when it was read (requests pipelined before it share the bytes).
  const requestId = sentRequestId(head ? head.headers['x-request-id'] : err.rawPacket) ?? randomUUID();
  const text = JSON.stringify(errorBody(refusal, requestId));
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n` +
      'Content-Type: application/json; charset=utf-8\r\n' +
      // Whatever route it was for: a keyed route's answers are never kept by a cache (openapi.ts).
      'Cache-Control: no-store\r\n' +
      `Content-Length: ${Buffer.byteLength(text)}\r\n` +
      `X-Request-Id: ${requestId}\r\n` +
      'Connection: close\r\n\r\n' +
      text,
  );
  linger(socket);
}

/**
 * Runs a refused request through the app as Node would have, had it parsed: the head read from
 * the bytes, no body (what follows the head fails to parse and is dropped), marked with the refused
 * header, which the app refuses right after the key and the rate limit (http-headers.ts).
 */
function replay(head: RefusedHead, socket: Socket, handle: Handler): void {
  const req = new IncomingMessage(socket);
  req.method = head.method;
  req.url = head.url;
  req.httpVersion = `1.${head.minorVersion}`;
  req.httpVersionMajor = 1;
  req.httpVersionMinor = head.minorVersion;
  req.rawHeaders = head.rawHeaders;
  req.headers = head.headers;
  req.push(null);
  req.complete = true;
  markUnreadableHeader(req, head.refused);
  answerThroughApp(req, socket, handle);
}

/**
 * Runs `req`, which Node will not answer itself, through the app on `socket`; the answer closes
 * the connection. Whatever the client sends after the head is read and dropped meanwhile.
 */
function answerThroughApp(req: IncomingMessage, socket: Socket, handle: Handler): void {
  const res = new ServerResponse(req);
  res.shouldKeepAlive = false;
  res.assignSocket(socket);
  socket.resume();
  // The app always answers (its errors middleware); should it not, the connection is not kept.
  const cutOff = setTimeout(() => socket.destroy(), REQUEST_TIMEOUT_MS).unref();
  socket.once('close', () => clearTimeout(cutOff));
  res.once('finish', () => {
    res.detachSocket(socket);
    socket.end();
    linger(socket);
  });
  void handle(req, res);
}

/**
 * Runs `then` once no response of an earlier request is being written on `socket` (Node gives the
 * socket to each pipelined request's response in turn); never when the connection ends first.
 */
function afterResponses(socket: Duplex, then: () => void): void {
  const current = (socket as Duplex & { _httpMessage?: ServerResponse | null })._httpMessage;
  if (!current) {
    then();
    return;
  }
  // Node's own 'finish' listener hands the socket to the next response; by setImmediate it has.
  current.once('finish', () =>
    setImmediate(() => (socket.writable ? afterResponses(socket, then) : socket.destroy())),
  );
}

/** Connections answered by answerUnparsable(), whose further bytes are read and dropped. */
const answered = new WeakSet<Duplex>();
/** How long such a connection stays open for the client to finish sending and read the answer. */
const LINGER_MS = 5_000;

function linger(socket: Duplex): void {
  const timer = setTimeout(() => socket.destroy(), LINGER_MS).unref();
  socket.once('close', () => clearTimeout(timer));
}
