import { randomUUID } from 'node:crypto';
import type { AppMiddleware } from '../context.ts';
import type { Logger } from '../../db/platform/log.ts';
import { setServerSpanAttribute, withRequestId } from '../../db/platform/tracing.ts';

/** The X-Request-Id values we echo (CONTRACT.md); anything else is replaced by a fresh id. */
export const SAFE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * Names the request (echoing a safe client id), sets X-Request-Id, scopes a child logger, and runs
 * the rest of the request with the id in scope for the jobs it sends.
 */
export function requestId(log: Logger): AppMiddleware {
  return async function requestId(ctx, next) {
    const sent = ctx.get('x-request-id');
    const id = SAFE_REQUEST_ID.test(sent) ? sent : randomUUID();
    ctx.state.requestId = id;
    ctx.state.log = log.child({ request_id: id });
    ctx.set('X-Request-Id', id);
    // The server span names the request as its answer and its log lines do.
    setServerSpanAttribute('booking.request_id', id);
    // The jobs this request causes carry its id (db/platform/tracing.ts).
    await withRequestId(id, next);
  };
}
