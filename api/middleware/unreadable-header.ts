/**
 * Refuses a request whose head Node's parser refused for a header (a U+0000 or another control
 * character in it). server.ts replays such a request through the app, marked with the header's
 * name, so that authentication and the rate limit judge it first, as they judge every request
 * (CONTRACT.md: validation, U+0000 included, runs after them, and a valid key always hears its
 * rate-limit headers); here, right after them, it is refused naming that header.
 */
import type { IncomingMessage } from 'node:http';
import type { AppMiddleware } from '../context.ts';
import { ValidationError } from '../errors.ts';

const REFUSED = Symbol('the header Node refused to parse');

/** Marks `req` as refused by Node's parser for the header `field` ('' when it has no name). */
export function markUnreadableHeader(req: IncomingMessage, field: string): void {
  (req as IncomingMessage & { [REFUSED]?: string })[REFUSED] = field;
}

/** The refusal of a request whose header HTTP could not carry. */
export function unreadableHeaderError(field: string): ValidationError {
  return new ValidationError(
    [{ field, message: 'a header or the request line has a character HTTP does not allow', in: 'header' }],
    'The request is not valid HTTP; see details.',
  );
}

export function unreadableHeader(): AppMiddleware {
  return async function unreadableHeader(ctx, next) {
    const field = (ctx.req as IncomingMessage & { [REFUSED]?: string })[REFUSED];
    if (field !== undefined) throw unreadableHeaderError(field);
    await next();
  };
}
