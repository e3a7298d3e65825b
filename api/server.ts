/**
 * The HTTP server around the Koa app, for `npm run web`, `npm start` and the tests alike. Node's
 * parser refuses some requests before any middleware sees them (a U+0000 or other control character
 * in a header, a malformed request line, headers over 16 KiB) and would answer with a bare
 * `400 Bad Request`; here they get the spec's error body like every other refusal, so a client
 * never has to parse two kinds of error.
 */
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { Duplex } from 'node:stream';
import type { App } from './app.ts';

/** A client must send a whole request within this (slow-loris protection), headers within the next. */
const REQUEST_TIMEOUT_MS = 30_000;
const HEADERS_TIMEOUT_MS = 20_000;

/** Creates the server for `app` and listens on `port` (0: any free port) of `host`. */
export async function listen(app: App, port: number, host: string): Promise<Server> {
  const server = createServer({ requestTimeout: REQUEST_TIMEOUT_MS }, app.callback());
  server.headersTimeout = HEADERS_TIMEOUT_MS;
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex) => answerUnparsable(err, socket));
  server.listen(port, host);
  await once(server, 'listening');
  return server;
}

/** Answers a request Node could not parse with the spec's error body, then closes the connection. */
function answerUnparsable(err: NodeJS.ErrnoException, socket: Duplex): void {
  if (!socket.writable || (err.code !== undefined && err.code === 'ECONNRESET')) {
    socket.destroy();
    return;
  }
  const [status, reason, error, message] =
    err.code === 'HPE_HEADER_OVERFLOW'
      ? [
          431,
          'Request Header Fields Too Large',
          'REQUEST_HEADERS_TOO_LARGE',
          'The request headers exceed 16 KiB.',
        ]
      : err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? [408, 'Request Timeout', 'REQUEST_TIMEOUT', 'The request was not received in time.']
        : [400, 'Bad Request', 'VALIDATION_ERROR', 'The request is not valid HTTP; see details.'];
  const requestId = randomUUID();
  const body: Record<string, unknown> = { error, message, request_id: requestId };
  if (status === 400) {
    body.details = [
      {
        field: '',
        message: 'a header or the request line has a character HTTP does not allow',
        in: 'header',
      },
    ];
  }
  const text = JSON.stringify(body);
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\n` +
      'Content-Type: application/json; charset=utf-8\r\n' +
      `Content-Length: ${Buffer.byteLength(text)}\r\n` +
      `X-Request-Id: ${requestId}\r\n` +
      'Connection: close\r\n\r\n' +
      text,
  );
}
