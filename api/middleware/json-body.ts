/**
 * Reads and parses a JSON body, for routes that declare one. Bodies over 64 KiB are 413 (checked
 * against Content-Length before reading, and while reading for chunked bodies); a body that is not
 * `application/json` is 415; JSON that does not parse, or nests too deeply for the parser, is 400.
 */
import getRawBody from 'raw-body';
import type { AppMiddleware } from '../context.ts';
import { PayloadTooLargeError, UnsupportedMediaTypeError, ValidationError } from '../errors.ts';

/** The largest request body accepted, in bytes (CONTRACT.md). */
export const BODY_LIMIT_BYTES = 64 * 1024;

/** Parses the JSON body into `ctx.state.body` (undefined when the request has none). */
export function jsonBody(): AppMiddleware {
  return async function jsonBody(ctx, next) {
    if (!ctx.request.length && !ctx.get('transfer-encoding')) {
      await next();
      return;
    }
    if (!ctx.is('application/json')) throw new UnsupportedMediaTypeError();
    let text: string;
    try {
      text = await getRawBody(ctx.req, {
        limit: BODY_LIMIT_BYTES,
        length: ctx.request.length,
        encoding: 'utf8',
      });
    } catch (err) {
      if ((err as { type?: string }).type === 'entity.too.large')
        throw new PayloadTooLargeError(BODY_LIMIT_BYTES);
      throw new ValidationError([{ field: '', message: 'the request body could not be read', in: 'body' }]);
    }
    try {
      ctx.state.body = JSON.parse(text);
    } catch {
      throw new ValidationError([{ field: '', message: 'the request body is not valid JSON', in: 'body' }]);
    }
    await next();
  };
}
