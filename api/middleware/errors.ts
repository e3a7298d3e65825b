/**
 * The one error middleware, first in the chain after the request id. Domain errors become the
 * spec's error body with the status from the table below; known HTTP-level failures raised by
 * Koa's own machinery are mapped to their codes; a database that cannot serve is 503 with
 * Retry-After; a value PostgreSQL refused (SQLSTATE class 22) is 400, logged as a warning that
 * names the validation gap it is; anything else is a logged 500 INTERNAL_ERROR that leaks nothing
 * but the request id.
 */
import { isDatabaseUnavailable, isDataException, isTransientConflict } from '../../db/postgres/pg-errors.ts';
import type { AppContext, AppMiddleware } from '../context.ts';
import {
  BookingNotFoundError,
  DeliveryNotDeadLetteredError,
  DeliveryNotFoundError,
  SubscriptionLimitReachedError,
  SubscriptionNotFoundError,
  DomainError,
  DoubleBookingAttemptError,
  InvalidFieldError,
  HeadersTooLargeError,
  HoldExpiredError,
  HoldGroupNotFoundError,
  HoldInGroupError,
  SeriesNotFoundError,
  StreamLimitReachedError,
  CursorExpiredError,
  HoldNotFoundError,
  ItemsInConflictError,
  ItemsRefusedError,
  ItemsRejectedError,
  ItemsTakenError,
  IdempotencyKeyMismatchError,
  InvalidHoldStateError,
  SlotRejectedError,
  SlotTakenError,
  TransformationConflictError,
  NotOwnerError,
  PackageNotFoundError,
  PayloadTooLargeError,
  PurchaseNotFoundError,
  RateLimitExceededError,
  RequestTimeoutError,
  RouteNotFoundError,
  ServiceUnavailableError,
  UnauthenticatedError,
  UnsupportedMediaTypeError,
  ValidationError,
  VenueNotAuthorizedError,
  VenueNotFoundError,
  WaitlistEntryNotFoundError,
  type DomainErrorClass,
} from '../errors.ts';
import { BODY_LIMIT_BYTES } from './json-body.ts';

/** The only table from domain error to HTTP status. */
const STATUS = new Map<DomainErrorClass, number>([
  [ValidationError, 400],
  [InvalidFieldError, 400],
  [SlotRejectedError, 400],
  [ItemsRejectedError, 400],
  [UnauthenticatedError, 401],
  [NotOwnerError, 403],
  [VenueNotAuthorizedError, 403],
  [VenueNotFoundError, 404],
  [HoldNotFoundError, 404],
  [HoldGroupNotFoundError, 404],
  [SeriesNotFoundError, 404],
  [CursorExpiredError, 410],
  [StreamLimitReachedError, 429],
  [BookingNotFoundError, 404],
  [RouteNotFoundError, 404],
  [SubscriptionNotFoundError, 404],
  [DeliveryNotFoundError, 404],
  [PackageNotFoundError, 404],
  [PurchaseNotFoundError, 404],
  [WaitlistEntryNotFoundError, 404],
  [SubscriptionLimitReachedError, 409],
  [DeliveryNotDeadLetteredError, 409],
  [SlotTakenError, 409],
  [TransformationConflictError, 409],
  [ItemsTakenError, 409],
  [ItemsInConflictError, 409],
  [HoldInGroupError, 409],
  [HoldExpiredError, 409],
  [InvalidHoldStateError, 409],
  [DoubleBookingAttemptError, 409],
  [IdempotencyKeyMismatchError, 409],
  [RequestTimeoutError, 408],
  [PayloadTooLargeError, 413],
  [UnsupportedMediaTypeError, 415],
  [RateLimitExceededError, 429],
  [HeadersTooLargeError, 431],
  [ServiceUnavailableError, 503],
]);

/**
 * The message of the line logged when PostgreSQL refused a value that request validation accepted:
 * a gap in validation to close. A warning, not an error: CONTRACT.md ("Error logs") allows no line
 * at level error or above for a request answered below 500, and this one is answered 400. The
 * fuzz suite treats the message itself as a failure, at any level (test/helpers/fuzz/exchange.ts).
 */
export const VALIDATION_GAP = 'validation gap: the database refused a value that request validation accepted';

/** The HTTP status of a domain error class (used by the OpenAPI document too). */
export function statusOf(errorClass: DomainErrorClass): number {
  const status = STATUS.get(errorClass);
  if (status === undefined) throw new Error(`no HTTP status mapped for ${errorClass.name}`);
  return status;
}

/** Renders every failure of the request as the spec's error body. */
export function errors(): AppMiddleware {
  return async function errors(ctx, next) {
    try {
      await next();
    } catch (err) {
      const known = err instanceof DomainError ? err : (fromDatabaseError(ctx, err) ?? fromHttpError(err));
      if (known) render(ctx, known);
      else {
        ctx.state.log.error({ err }, 'unhandled error');
        ctx.status = 500;
        ctx.body = {
          error: 'INTERNAL_ERROR',
          message: 'Something went wrong on our side; the request id identifies it.',
          request_id: ctx.state.requestId,
        };
      }
    }
  };
}

/**
 * The spec's error body for a domain error: its code, message and the request id, plus `details`
 * for VALIDATION_ERROR and `retry_after_seconds` for RATE_LIMIT_EXCEEDED. (The HTTP server's own
 * refusals, api/server.ts, use it too.)
 */
export function errorBody(err: DomainError, requestId: string): Record<string, unknown> {
  const body: Record<string, unknown> = { error: err.code, message: err.message, request_id: requestId };
  if (
    err instanceof ValidationError ||
    err instanceof ItemsRefusedError ||
    err instanceof CursorExpiredError
  ) {
    body.details = err.details;
  }
  if (err instanceof HoldInGroupError) body.hold_group_id = err.holdGroupId;
  if (err instanceof RateLimitExceededError || err instanceof StreamLimitReachedError) {
    body.retry_after_seconds = err.retryAfterSeconds;
  }
  return body;
}

function render(ctx: AppContext, err: DomainError): void {
  ctx.status = STATUS.get(err.constructor as DomainErrorClass) ?? 500;
  if (
    err instanceof RateLimitExceededError ||
    err instanceof ServiceUnavailableError ||
    err instanceof StreamLimitReachedError
  ) {
    ctx.set('Retry-After', String(err.retryAfterSeconds));
  }
  ctx.body = errorBody(err, ctx.state.requestId);
}

/**
 * Failures of the database that are not bugs of the request's code path: an outage, a timeout, or
 * a conflict still lost after the use case's retries (503, logged as a warning: the operator sees
 * it, the client retries), or a value the database refused that validation let through (400,
 * logged as VALIDATION_GAP: a gap in validation to close; the answer must still not be a 500).
 */
function fromDatabaseError(ctx: AppContext, err: unknown): DomainError | undefined {
  if (isDatabaseUnavailable(err) || isTransientConflict(err)) {
    ctx.state.log.warn({ err: (err as Error).message }, 'database unavailable or contended');
    return new ServiceUnavailableError();
  }
  if (isDataException(err)) {
    ctx.state.log.warn({ err, sqlstate: err.code, method: ctx.method, path: ctx.path }, VALIDATION_GAP);
    const where = ctx.state.body === undefined ? 'query' : 'body';
    return new ValidationError([{ field: '', message: 'a value could not be stored as sent', in: where }]);
  }
  return undefined;
}

/**
 * Errors Koa and its helpers throw for bad requests: a malformed percent-escape in a path, a
 * request target Koa cannot parse to find the path (an absolute form with a bad host, `http://[`).
 */
function fromHttpError(err: unknown): DomainError | undefined {
  if (err instanceof URIError) {
    return new ValidationError([{ field: '', message: 'malformed percent-encoding in the URL', in: 'path' }]);
  }
  if ((err as { code?: unknown } | null)?.code === 'ERR_INVALID_URL') {
    return new ValidationError([{ field: '', message: 'the request target is not a valid URL', in: 'path' }]);
  }
  const status = (err as { status?: unknown; expose?: unknown } | null)?.status;
  if (typeof status !== 'number' || status < 400 || status >= 500) return undefined;
  if (status === 413) return new PayloadTooLargeError(BODY_LIMIT_BYTES);
  if (status === 415) return new UnsupportedMediaTypeError();
  return new ValidationError([{ field: '', message: 'the request could not be read', in: 'body' }]);
}
