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

const UNREADABLE = Symbol('why the body can never be read, and the reader waiting for it');
type Marked = IncomingMessage & {
  [UNREADABLE]?: { failed?: Error; reader?: ((err: Error) => void) | undefined };
};

/**
 * Fails `req`'s body, which can never complete now: Node's parser refused its bytes or gave up
 * waiting for them (server.ts), or the client closed its side before sending it all. The reader
 * waiting for it fails at once with `err`; one that starts later fails as it starts. The one place
 * either cause goes through: an error raised on the request itself would reach whatever listens
 * there, or end the process when nothing does.
 */
export function failBody(req: IncomingMessage, err: Error): void {
  const state = ((req as Marked)[UNREADABLE] ??= {});
  state.failed ??= err;
  state.reader?.(state.failed);
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
    // Only a body still on its way is watched (most arrive with their head), so a whole request is
    // read as sent. A client that closes its side before sending the whole body sends no more, and
    // Node may wait on (its request timeout does not cover a half-closed connection): it fails.
    const req = ctx.req as Marked;
    const socket = req.socket;
    const cutOff = () => {
      if (!req.complete) failBody(req, bodyCutOff());
    };
    let failure: Promise<never> | undefined;
    if (!req.complete) {
      const state = (req[UNREADABLE] ??= {});
      failure = new Promise<never>((_, reject) => {
        state.reader = reject;
        if (state.failed) reject(state.failed);
      });
      failure.catch(() => undefined); // settled by the read alone, when that comes first
      socket.once('end', cutOff);
      if (socket.readableEnded) cutOff();
    }
    try {
      const read = getRawBody(req, { limit: BODY_LIMIT_BYTES, length: ctx.request.length });
      bytes = await (failure ? Promise.race([read, failure]) : read);
    } catch (err) {
      if ((err as { type?: string }).type === 'entity.too.large')
        throw new PayloadTooLargeError(BODY_LIMIT_BYTES);
      // Not all of it came, in time (server.ts fails it with Node's refusal) or at all: what is left
      // of such a request is no next request, and the connection closes after the answer.
      const code = (err as { code?: string }).code;
      if (code === 'ERR_HTTP_REQUEST_TIMEOUT' || code === BODY_CUT_OFF) ctx.res.shouldKeepAlive = false;
      if (code === 'ERR_HTTP_REQUEST_TIMEOUT') throw new RequestTimeoutError();
      throw new ValidationError([{ field: '', message: 'the request body could not be read', in: 'body' }]);
    } finally {
      if (failure) {
        socket.off('end', cutOff);
        req[UNREADABLE]!.reader = undefined;
      }
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
