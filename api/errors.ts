/**
 * Domain errors: values with the spec's stable code and a client-safe message, and no HTTP. The
 * one table from error class to status is `api/middleware/errors.ts`. Where the spec uses one code
 * with two statuses (UNAUTHORIZED as 401 and 403), there are two classes.
 */

/** Where a validation problem was found, as the spec's `details[].in`. */
export type InputLocation = 'body' | 'query' | 'path' | 'header';

/** One entry of a VALIDATION_ERROR's `details`. */
export interface FieldProblem {
  field: string;
  message: string;
  in: InputLocation;
}

/** Base of every error the API answers with its own body. */
export abstract class DomainError extends Error {
  /** The spec's machine-readable `error` code. */
  static readonly code: string;
  get code(): string {
    return (this.constructor as typeof DomainError).code;
  }
}

/** 400: malformed or missing input. */
export class ValidationError extends DomainError {
  static override readonly code = 'VALIDATION_ERROR';
  readonly details: FieldProblem[];
  constructor(details: FieldProblem[], message = 'The request is invalid; see details.') {
    super(message);
    this.details = details;
  }
}

/**
 * 400: a field of the request is wrong in a way only the use case can tell (a resource that is not
 * the venue's, a date already past, a phone that is not the member's). Use cases name the field;
 * the route answers it as VALIDATION_ERROR with the field located where the request carried it.
 */
export class InvalidFieldError extends DomainError {
  static override readonly code = 'VALIDATION_ERROR';
  readonly field: string;
  constructor(field: string, message: string) {
    super(message);
    this.field = field;
  }
}

/** 401: a missing, unknown, revoked or expired key. The message never says which. */
export class UnauthenticatedError extends DomainError {
  static override readonly code = 'UNAUTHORIZED';
  constructor() {
    super('A valid x-api-key header is required.');
  }
}

/** 403: the hold or booking belongs to another partner. */
export class NotOwnerError extends DomainError {
  static override readonly code = 'UNAUTHORIZED';
  constructor(what = 'resource') {
    super(`This ${what} belongs to another partner.`);
  }
}

/** 403: the venue is not granted to the caller (or archived, or does not exist). */
export class VenueNotAuthorizedError extends DomainError {
  static override readonly code = 'VENUE_NOT_AUTHORIZED';
  constructor() {
    super('This venue is not available to your API key.');
  }
}

/** 404: the venue does not exist or is not granted (indistinguishable by design). */
export class VenueNotFoundError extends DomainError {
  static override readonly code = 'VENUE_NOT_FOUND';
  constructor() {
    super('Venue not found.');
  }
}

/** 404: no route answers this method and path. */
export class RouteNotFoundError extends DomainError {
  static override readonly code = 'NOT_FOUND';
  constructor(method: string, path: string) {
    super(`No route ${method} ${path}.`);
  }
}

/** 413: the body is larger than the limit. */
export class PayloadTooLargeError extends DomainError {
  static override readonly code = 'PAYLOAD_TOO_LARGE';
  constructor(limitBytes: number) {
    super(`Request bodies are limited to ${limitBytes} bytes.`);
  }
}

/** 408: the client did not send its whole request in time (answered by the HTTP server). */
export class RequestTimeoutError extends DomainError {
  static override readonly code = 'REQUEST_TIMEOUT';
  constructor() {
    super('The request was not received in time.');
  }
}

/** 431: the request line and headers are larger than the HTTP server reads (16 KiB). */
export class HeadersTooLargeError extends DomainError {
  static override readonly code = 'REQUEST_HEADERS_TOO_LARGE';
  constructor() {
    super('The request line and headers exceed 16 KiB.');
  }
}

/** 415: a body that is not JSON. */
export class UnsupportedMediaTypeError extends DomainError {
  static override readonly code = 'UNSUPPORTED_MEDIA_TYPE';
  constructor() {
    super('Request bodies must be application/json.');
  }
}

/** 429: the key's window is full. */
export class RateLimitExceededError extends DomainError {
  static override readonly code = 'RATE_LIMIT_EXCEEDED';
  readonly retryAfterSeconds: number;
  constructor(retryAfterSeconds: number) {
    super(`Rate limit exceeded; retry after ${retryAfterSeconds} seconds.`);
    this.retryAfterSeconds = retryAfterSeconds;
  }
}

/** 429: the partner already has its 5 availability streams open, across every web process. */
export class StreamLimitReachedError extends DomainError {
  static override readonly code = 'STREAM_LIMIT_REACHED';
  readonly retryAfterSeconds: number;
  constructor(limit: number, retryAfterSeconds: number) {
    super(
      `You already have ${limit} availability streams open; close one, or retry after ${retryAfterSeconds} seconds.`,
    );
    this.retryAfterSeconds = retryAfterSeconds;
  }
}

/** 410: the feed no longer holds what came after this cursor; fetch availability again. */
export class CursorExpiredError extends DomainError {
  static override readonly code = 'CURSOR_EXPIRED';
  readonly details: FieldProblem[];
  constructor() {
    super(
      'The change feed no longer holds the changes after this cursor; fetch GET /slots/availability again.',
    );
    this.details = [
      {
        field: 'after',
        in: 'query',
        message: 'has expired: continue from the changes_cursor of a fresh GET /slots/availability',
      },
    ];
  }
}

/** 503: the database cannot serve right now (unreachable, restarting, or too slow); retry shortly. */
export class ServiceUnavailableError extends DomainError {
  static override readonly code = 'SERVICE_UNAVAILABLE';
  readonly retryAfterSeconds: number;
  constructor(retryAfterSeconds = 1) {
    super('The service cannot reach its database right now; retry shortly.');
    this.retryAfterSeconds = retryAfterSeconds;
  }
}

/** 400: the slot cannot be held under the venue's rules (grid, hours, past, lead time, blackout…). */
export class SlotRejectedError extends DomainError {
  static override readonly code = 'SLOT_NOT_AVAILABLE';
}

/** 409: the window is held or booked on this resource. */
export class SlotTakenError extends DomainError {
  static override readonly code = 'SLOT_NOT_AVAILABLE';
  constructor() {
    super('This slot is already held or booked.');
  }
}

/** 409: the resource is free, but a convertible sibling (its whole, or one of its parts) is reserved. */
export class TransformationConflictError extends DomainError {
  static override readonly code = 'TRANSFORMATION_CONFLICT';
  constructor() {
    super(
      'The resource is free, but a resource sharing its space (its whole or one of its parts) is reserved.',
    );
  }
}

/** Why one item of a hold group (or one occurrence of a series) cannot be held. */
export const ITEM_REASONS = [
  'UNKNOWN_RESOURCE',
  'NOT_ON_GRID',
  'IN_PAST',
  'BEYOND_BOOKING_WINDOW',
  'CLOSED',
  'LEAD_TIME',
  'BLACKOUT',
  'TAKEN',
  'TRANSFORMATION_CONFLICT',
] as const;
export type ItemReason = (typeof ITEM_REASONS)[number];

/** One failing item of a refused hold group (`items.i`) or series (`occurrences.k`), and why. */
export interface ItemRefusal extends FieldProblem {
  reason: ItemReason;
  /** A series occurrence's venue-local date. */
  local_date?: string;
}

/**
 * A hold group (or a series) refused because some of its items cannot be held: every failing item
 * is named in `details`, in item order. The class says the status: 400 when some reason is the
 * venue's rules, else 409 for TAKEN, else 409 for TRANSFORMATION_CONFLICT.
 */
export abstract class ItemsRefusedError extends DomainError {
  readonly details: ItemRefusal[];
  constructor(details: ItemRefusal[]) {
    super(
      `${details.length === 1 ? 'An item' : `${details.length} items`} cannot be held; see details. Nothing was held.`,
    );
    this.details = details;
  }
}

/** 400: some item is refused by the venue's rules (grid, past, booking window, closed, lead time…). */
export class ItemsRejectedError extends ItemsRefusedError {
  static override readonly code = 'SLOT_NOT_AVAILABLE';
}

/** 409: some item's window is held or booked on its resource. */
export class ItemsTakenError extends ItemsRefusedError {
  static override readonly code = 'SLOT_NOT_AVAILABLE';
}

/** 409: some item's resource shares a unit with a reserved one (a whole and its parts). */
export class ItemsInConflictError extends ItemsRefusedError {
  static override readonly code = 'TRANSFORMATION_CONFLICT';
}

/** 404: no hold group with this id. */
export class HoldGroupNotFoundError extends DomainError {
  static override readonly code = 'HOLD_GROUP_NOT_FOUND';
  constructor() {
    super('Hold group not found.');
  }
}

/** 404: no series with this id. */
export class SeriesNotFoundError extends DomainError {
  static override readonly code = 'SERIES_NOT_FOUND';
  constructor() {
    super('Series not found.');
  }
}

/** 409: the hold is one of a group's, confirmed, released and expired only with its group. */
export class HoldInGroupError extends DomainError {
  static override readonly code = 'HOLD_IN_GROUP';
  readonly holdGroupId: string;
  constructor(holdGroupId: string) {
    super('This hold belongs to a hold group: confirm or release the group (hold_group_id).');
    this.holdGroupId = holdGroupId;
  }
}

/** 404: no hold with this id. */
export class HoldNotFoundError extends DomainError {
  static override readonly code = 'HOLD_NOT_FOUND';
  constructor() {
    super('Hold not found.');
  }
}

/** 409: the hold reached its expiry. */
export class HoldExpiredError extends DomainError {
  static override readonly code = 'HOLD_EXPIRED';
  constructor(message = 'The hold has expired; place a new hold.') {
    super(message);
  }
}

/** 409: the hold or booking is not in a state that allows this operation. */
export class InvalidHoldStateError extends DomainError {
  static override readonly code = 'INVALID_HOLD_STATE';
}

/** 409: the hold's slot changed between hold and confirm. */
export class DoubleBookingAttemptError extends DomainError {
  static override readonly code = 'DOUBLE_BOOKING_ATTEMPT';
  constructor() {
    super('The slot changed between hold and confirm; it is no longer reserved for this hold.');
  }
}

/** 409: the idempotency key was used for a different request or operation. */
export class IdempotencyKeyMismatchError extends DomainError {
  static override readonly code = 'IDEMPOTENCY_KEY_MISMATCH';
}

/** 404: no booking with this id. */
export class BookingNotFoundError extends DomainError {
  static override readonly code = 'BOOKING_NOT_FOUND';
  constructor() {
    super('Booking not found.');
  }
}

/** 404: no webhook subscription with this id among the caller's. */
export class SubscriptionNotFoundError extends DomainError {
  static override readonly code = 'SUBSCRIPTION_NOT_FOUND';
  constructor() {
    super('Webhook subscription not found.');
  }
}

/** 409: the partner already has the maximum number of subscriptions. */
export class SubscriptionLimitReachedError extends DomainError {
  static override readonly code = 'SUBSCRIPTION_LIMIT_REACHED';
  constructor(limit: number) {
    super(`A partner may have at most ${limit} webhook subscriptions.`);
  }
}

/** 404: no delivery attempt with this id among the caller's. */
export class DeliveryNotFoundError extends DomainError {
  static override readonly code = 'DELIVERY_NOT_FOUND';
  constructor() {
    super('Delivery not found.');
  }
}

/** 409: only a dead-lettered delivery can be redelivered. */
export class DeliveryNotDeadLetteredError extends DomainError {
  static override readonly code = 'DELIVERY_NOT_DEAD_LETTERED';
}

/** 404: no catalogue package with this id. */
export class PackageNotFoundError extends DomainError {
  static override readonly code = 'PACKAGE_NOT_FOUND';
  constructor() {
    super('Package not found.');
  }
}

/** 404: no package purchase with this id among those the caller sold. */
export class PurchaseNotFoundError extends DomainError {
  static override readonly code = 'PURCHASE_NOT_FOUND';
  constructor() {
    super('Package purchase not found.');
  }
}

/** 404: no waitlist entry with this id among the caller's. */
export class WaitlistEntryNotFoundError extends DomainError {
  static override readonly code = 'WAITLIST_ENTRY_NOT_FOUND';
  constructor() {
    super('Waitlist entry not found.');
  }
}

/** A domain error class, for tables and route declarations. */
export type DomainErrorClass = (abstract new (...args: never[]) => DomainError) & { readonly code: string };
