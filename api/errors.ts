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

/** A domain error class, for tables and route declarations. */
export type DomainErrorClass = (abstract new (...args: never[]) => DomainError) & { readonly code: string };
