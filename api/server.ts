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
import { createServer, STATUS_CODES, type Server } from 'node:http';
import { Server as NetServer } from 'node:net';
import type { Duplex } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import type { App } from './app.ts';
import {
  HeadersTooLargeError,
  RequestTimeoutError,
  ValidationError,
  type DomainErrorClass,
} from './errors.ts';
import { errorBody, statusOf } from './middleware/errors.ts';
import { SAFE_REQUEST_ID } from './middleware/request-id.ts';

/** A client must send a whole request within this (slow-loris protection), headers within the next. */
const REQUEST_TIMEOUT_MS = 30_000;
const HEADERS_TIMEOUT_MS = 20_000;

/** Creates the server for `app` and listens on `port` (0: any free port) of `host`. */
export async function listen(app: App, port: number, host: string): Promise<Server> {
  const handle = app.callback();
  const server = createServer({ requestTimeout: REQUEST_TIMEOUT_MS }, (req, res) => void handle(req, res));
  server.headersTimeout = HEADERS_TIMEOUT_MS;
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex) => answerUnparsable(err, socket));
  server.listen(port, host);
  await once(server, 'listening');
  return server;
}

/** How long connections accepted just before a stop get to deliver their request. */
const ACCEPTED_GRACE_MS = 1_000;

/**
 * Stops `server` gracefully: no new connection is accepted; a connection accepted just before
 * still gets its request answered (http.Server.close() would close it at once as "idle", cutting
 * off a request already on its way); open availability streams end at once; every request in
 * flight is answered, its connection then
 * closed; idle keep-alive connections are closed after a grace period; after `drainTimeoutMs`
 * whatever is left is cut. Resolves when no handler runs any more (or the timeout passed).
 */
export async function closeGracefully(server: Server, app: App, drainTimeoutMs: number): Promise<void> {
  app.drain();
  // Availability streams never finish by themselves: they end now, sending nothing more.
  app.endStreams();
  const closed = once(server, 'close');
  // net.Server's close: stop listening, but leave the accepted connections to finish.
  NetServer.prototype.close.call(server);
  const cutOff = setTimeout(() => server.closeAllConnections(), drainTimeoutMs);
  for (let waited = 0; waited < ACCEPTED_GRACE_MS && (await connections(server)) > 0; waited += 50) {
    await sleep(50);
  }
  server.closeIdleConnections();
  await closed;
  // A socket can close before its handler finishes (a client hanging up); wait for those too, but
  // not forever: after the drain timeout the caller closes the pool under them.
  const gaveUp = sleep(drainTimeoutMs, undefined, { ref: false });
  await Promise.race([app.idle(), gaveUp]);
  clearTimeout(cutOff);
}

function connections(server: Server): Promise<number> {
  return new Promise((resolve) => server.getConnections((err, count) => resolve(err ? 0 : count)));
}

/** Answers a request Node could not parse with the spec's error body, then closes the connection. */
function answerUnparsable(err: NodeJS.ErrnoException & { rawPacket?: Buffer }, socket: Duplex): void {
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
  const linger = setTimeout(() => socket.destroy(), LINGER_MS).unref();
  socket.once('close', () => clearTimeout(linger));
  const refusal =
    err.code === 'HPE_HEADER_OVERFLOW'
      ? new HeadersTooLargeError()
      : err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? new RequestTimeoutError()
        : new ValidationError(
            [
              {
                field: refusedHeader(err.rawPacket) ?? '',
                message: 'a header or the request line has a character HTTP does not allow',
                in: 'header',
              },
            ],
            'The request is not valid HTTP; see details.',
          );
  const status = statusOf(refusal.constructor as DomainErrorClass);
  const requestId = sentRequestId(err.rawPacket) ?? randomUUID();
  const text = JSON.stringify(errorBody(refusal, requestId));
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n` +
      'Content-Type: application/json; charset=utf-8\r\n' +
      `Content-Length: ${Buffer.byteLength(text)}\r\n` +
      `X-Request-Id: ${requestId}\r\n` +
      'Connection: close\r\n\r\n' +
      text,
  );
}

/** Connections answered by answerUnparsable(), whose further bytes are read and dropped. */
const answered = new WeakSet<Duplex>();
/** How long such a connection stays open for the client to finish sending and read the answer. */
const LINGER_MS = 5_000;

/**
 * The name of the first header whose line holds a character HTTP does not allow (U+0000 and the
 * other controls but tab), as the error's `details[].field` names it (CONTRACT.md: a U+0000 in a
 * header is refused naming the field); undefined when the request line is at fault or the bytes
 * Node read do not show it.
 */
function refusedHeader(raw: Buffer | undefined): string | undefined {
  const lines = raw?.toString('latin1').split(/\r?\n/).slice(1) ?? [];
  // eslint-disable-next-line no-control-regex -- control characters are what this looks for
  const line = lines.find((text) => /[\x00-\x08\x0a-\x1f\x7f]/.test(text));
  const name = line === undefined ? undefined : /^([!#$%&'*+.^_`|~0-9A-Za-z-]+):/.exec(line)?.[1];
  return name?.toLowerCase();
}

/** The client's X-Request-Id, when the bytes Node read carry a safe one (echoed as usual). */
function sentRequestId(raw: Buffer | undefined): string | undefined {
  const sent = raw && /^x-request-id:[ \t]*([^\r\n]*?)[ \t]*\r?$/im.exec(raw.toString('latin1'))?.[1];
  return sent && SAFE_REQUEST_ID.test(sent) ? sent : undefined;
}
