/**
 * Reads and parses a JSON body, for routes that declare one. Bodies over 64 KiB are 413 (checked
 * against Content-Length before reading, and while reading for chunked bodies); a body that is not
 * `application/json`, or declares a charset other than UTF-8, is 415; bytes that are not UTF-8
 * (which a lenient decoder would turn into U+FFFD, storing something the client never sent), and
 * JSON that does not parse or nests too deeply for the parser, are 400; a body cut off (the client
 * closed its side before sending all of it) is 400, and one not all sent within the request
 * timeout 408.
 */
import type { IncomingMessage } from 'node:http';
import getRawBody from 'raw-body';
import type { AppMiddleware } from '../context.ts';
import {
  PayloadTooLargeError,
  RequestTimeoutError,
  UnsupportedMediaTypeError,
  ValidationError,
} from '../errors.ts';

/** The largest request body accepted, in bytes (CONTRACT.md). */
export const BODY_LIMIT_BYTES = 64 * 1024;

/** JSON is UTF-8 (RFC 8259); a byte sequence that is not is refused, not repaired. */
const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

/** No charset (JSON's default) or UTF-8, however it is spelled. */
function isUtf8Charset(charset: string): boolean {
  return charset === '' || /^utf-?8$/i.test(charset);
}

const UNREADABLE = Symbol('the error that ended the reading of the body');
type Marked = IncomingMessage & { [UNREADABLE]?: Error };

/**
 * Marks `req`'s body as unreadable: Node's parser failed on it (server.ts), or gave up waiting for
 * it, before the body was read. Reading it then fails at once with `err`, as it would have had the
 * reader been listening.
 */
export function markUnreadableBody(req: IncomingMessage, err: Error): void {
  (req as Marked)[UNREADABLE] = err;
}

const BODY_CUT_OFF = 'BODY_CUT_OFF';
const bodyCutOff = () =>
  Object.assign(new Error('the client closed its side mid-body'), { code: BODY_CUT_OFF });

/** Parses the JSON body into `ctx.state.body` (undefined when the request has none). */
export function jsonBody(): AppMiddleware {
  return async function jsonBody(ctx, next) {
    if (!ctx.request.length && !ctx.get('transfer-encoding')) {
      await next();
      return;
    }
    if (!ctx.is('application/json') || !isUtf8Charset(ctx.request.charset)) {
      throw new UnsupportedMediaTypeError();
    }
    let bytes: Buffer;
    // A client that closes its side before sending the whole body sends no more, and Node may wait
    // on (its request timeout does not cover a half-closed connection): the read fails. Only a body
    // still on its way is watched (most arrive with their head), so a whole request is read as sent.
    // The watch rejects a promise of its own rather than raising an error on the request: when Node
    // aborts the request itself on the same close, the reader has already stopped listening, and an
    // error nobody listens to would end the process.
    const socket = ctx.req.socket;
    let cutOff: (() => void) | undefined;
    const watch = ctx.req.complete
      ? undefined
      : new Promise<never>((_, reject) => {
          cutOff = () => {
            if (!ctx.req.complete) reject(bodyCutOff());
          };
          socket.once('end', cutOff);
          if (socket.readableEnded) cutOff();
        });
    watch?.catch(() => undefined); // settled by the read alone, when that comes first
    try {
      const unreadable = (ctx.req as Marked)[UNREADABLE];
      const read = unreadable
        ? Promise.reject(unreadable)
        : getRawBody(ctx.req, { limit: BODY_LIMIT_BYTES, length: ctx.request.length });
      bytes = await (watch ? Promise.race([read, watch]) : read);
    } catch (err) {
      if ((err as { type?: string }).type === 'entity.too.large')
        throw new PayloadTooLargeError(BODY_LIMIT_BYTES);
      // Not all of it came, in time (server.ts hands the reader Node's refusal) or at all: what is
      // left of such a request is no next request, and the connection closes after the answer.
      const code = (err as { code?: string }).code;
      if (code === 'ERR_HTTP_REQUEST_TIMEOUT' || code === BODY_CUT_OFF) ctx.res.shouldKeepAlive = false;
      if (code === 'ERR_HTTP_REQUEST_TIMEOUT') throw new RequestTimeoutError();
      throw new ValidationError([{ field: '', message: 'the request body could not be read', in: 'body' }]);
    } finally {
      if (cutOff) socket.off('end', cutOff);
    }
    let text: string;
    try {
      text = strictUtf8.decode(bytes);
    } catch {
      throw new ValidationError([{ field: '', message: 'the request body is not valid UTF-8', in: 'body' }]);
    }
    try {
      ctx.state.body = JSON.parse(text);
    } catch {
      throw new ValidationError([{ field: '', message: 'the request body is not valid JSON', in: 'body' }]);
    }
    await next();
  };
}
