/**
 * Reads and parses a JSON body, for routes that declare one. Bodies over 64 KiB are 413 (checked
 * against Content-Length before reading, and while reading for chunked bodies); a body that is not
 * `application/json`, or declares a charset other than UTF-8, is 415; bytes that are not UTF-8
 * (which a lenient decoder would turn into U+FFFD, storing something the client never sent), and
 * JSON that does not parse or nests too deeply for the parser, are 400.
 */
import getRawBody from 'raw-body';
import type { AppMiddleware } from '../context.ts';
import { PayloadTooLargeError, UnsupportedMediaTypeError, ValidationError } from '../errors.ts';

/** The largest request body accepted, in bytes (CONTRACT.md). */
export const BODY_LIMIT_BYTES = 64 * 1024;

/** JSON is UTF-8 (RFC 8259); a byte sequence that is not is refused, not repaired. */
const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

/** No charset (JSON's default) or UTF-8, however it is spelled. */
function isUtf8Charset(charset: string): boolean {
  return charset === '' || /^utf-?8$/i.test(charset);
}

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
    try {
      bytes = await getRawBody(ctx.req, { limit: BODY_LIMIT_BYTES, length: ctx.request.length });
    } catch (err) {
      if ((err as { type?: string }).type === 'entity.too.large')
        throw new PayloadTooLargeError(BODY_LIMIT_BYTES);
      throw new ValidationError([{ field: '', message: 'the request body could not be read', in: 'body' }]);
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
