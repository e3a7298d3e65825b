import { randomUUID } from 'node:crypto';
import type { AppMiddleware, AppState } from '../context.ts';
import type { AuthenticatedRequest } from '../../db/queries/api-keys.ts';
import type { Logger } from '../../db/platform/log.ts';
import { setServerSpanAttribute, withRequestId } from '../../db/platform/tracing.ts';

/** The X-Request-Id values we echo (CONTRACT.md); anything else is replaced by a fresh id. */
export const SAFE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * Names the request (echoing a safe client id), sets X-Request-Id, gives it its state (with a
 * logger scoped to it), and runs the rest of the request with the id in scope for the jobs it sends.
 */
export function requestId(log: Logger): AppMiddleware {
  return async function requestId(ctx, next) {
    const sent = ctx.get('x-request-id');
    const id = SAFE_REQUEST_ID.test(sent) ? sent : randomUUID();
    ctx.state = new RequestState(id, log);
    ctx.set('X-Request-Id', id);
    // The server span names the request as its answer and its log lines do.
    setServerSpanAttribute('booking.request_id', id);
    // The jobs this request causes carry its id (db/platform/tracing.ts).
    await withRequestId(id, next);
  };
}

/**
 * A request's state, whose `log` is the request's child logger (`request_id`, and `partner_id` once
 * the key is known), made when something first logs through it. Most requests log only their
 * request line, which `requestLog()` writes through the process logger with the same fields, so
 * they make no child at all: a child of a child per request cost the web process ~6 µs (pino
 * rebuilds its bindings and the line's prototype chain for every new logger; docs/BENCHMARKS.md).
 */
class RequestState implements AppState {
  readonly requestId: string;
  auth?: AuthenticatedRequest;
  body?: unknown;
  readonly #processLog: Logger;
  /** The child made last, and the partner it names. */
  #scoped: Logger | undefined;
  #scopedPartner: string | undefined;

  constructor(requestId: string, processLog: Logger) {
    this.requestId = requestId;
    this.#processLog = processLog;
  }

  get log(): Logger {
    const partnerId = this.auth?.partnerId;
    if (!this.#scoped || this.#scopedPartner !== partnerId) {
      this.#scoped = this.#processLog.child(requestLogFields(this));
      this.#scopedPartner = partnerId;
    }
    return this.#scoped;
  }
}

/**
 * The fields that name a request in every line logged about it (CONTRACT.md, "Error logs"): its id,
 * and its partner once the key is known. The request's child logger binds them; the request line,
 * written by the process logger, carries them itself.
 */
export function requestLogFields(state: Pick<AppState, 'requestId' | 'auth'>): {
  request_id: string;
  partner_id?: string;
} {
  const partnerId = state.auth?.partnerId;
  return partnerId ? { request_id: state.requestId, partner_id: partnerId } : { request_id: state.requestId };
}
