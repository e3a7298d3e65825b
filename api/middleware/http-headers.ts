/**
 * Refuses a request whose headers HTTP does not allow, right after authentication and the rate
 * limit (CONTRACT.md: validation, U+0000 included, runs after them, and a valid key always hears its
 * rate-limit headers):
 * - a header holding a U+0000 or another control character. Node's parser refuses those before any
 *   middleware runs; server.ts replays such a request through the app, marked with the header's
 *   name (markUnreadableHeader), and it is refused here naming that header;
 * - an HTTP/1.1 request with no Host or more than one (RFC 9112 §3.2 asks for a 400). Node would
 *   answer those itself with a bare 400; server.ts leaves them to the app, to get the error body.
 */
import type { IncomingMessage } from 'node:http';
import type { AppMiddleware } from '../context.ts';
import { LAST_EVENT_ID } from '../feed/cursor.ts';
import { ValidationError } from '../errors.ts';

const REFUSED = Symbol('the header Node refused to parse');
type Marked = IncomingMessage & { [REFUSED]?: string };

/** Marks `req` as refused by Node's parser for the header `field` ('' when it has no name). */
export function markUnreadableHeader(req: IncomingMessage, field: string): void {
  (req as Marked)[REFUSED] = field;
}

/** Headers the API reads, by the name its other refusals give them; any other is named in lower case. */
const DOCUMENTED_NAMES = new Map([[LAST_EVENT_ID.toLowerCase(), LAST_EVENT_ID]]);

/** The refusal of a request whose header `name` (lower case, as Node names headers) HTTP could not carry. */
export function unreadableHeaderError(name: string): ValidationError {
  return notValidHttp(
    DOCUMENTED_NAMES.get(name) ?? name,
    'a header or the request line has a character HTTP does not allow',
  );
}

function notValidHttp(field: string, message: string): ValidationError {
  return new ValidationError(
    [{ field, message, in: 'header' }],
    'The request is not valid HTTP; see details.',
  );
}

export function httpHeaders(): AppMiddleware {
  return async function httpHeaders(ctx, next) {
    const req = ctx.req as Marked;
    const refused = req[REFUSED];
    if (refused !== undefined) throw unreadableHeaderError(refused);
    if (req.httpVersionMinor === 1 && req.httpVersionMajor === 1 && hostLines(req.rawHeaders) !== 1) {
      throw notValidHttp('host', 'an HTTP/1.1 request carries exactly one Host header');
    }
    await next();
  };
}

/** How many Host lines `rawHeaders` (names and values alternately) has. */
function hostLines(rawHeaders: readonly string[]): number {
  let count = 0;
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i]!;
    if (name.length === 4 && name.toLowerCase() === 'host') count++;
  }
  return count;
}
