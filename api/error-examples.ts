/**
 * One real instance of each domain error, for the OpenAPI document's examples: the message a
 * client actually receives. Errors whose message is fixed are built as the service builds them;
 * those whose message depends on the case are built with one that the service sends (a test
 * holds every such message to a literal in the code that throws it).
 */
import { BODY_LIMIT_BYTES } from './middleware/json-body.ts';
import { itemsRefused } from './use-cases/item-refusals.ts';
import { STREAMS_PER_PARTNER } from './use-cases/read-availability-changes.ts';
import { MAX_SUBSCRIPTIONS } from './use-cases/manage-webhooks.ts';
import {
  DeliveryNotDeadLetteredError,
  HoldInGroupError,
  StreamLimitReachedError,
  IdempotencyKeyMismatchError,
  ItemsInConflictError,
  ItemsRejectedError,
  ItemsTakenError,
  InvalidHoldStateError,
  NotOwnerError,
  PayloadTooLargeError,
  RateLimitExceededError,
  RouteNotFoundError,
  ServiceUnavailableError,
  SlotRejectedError,
  SubscriptionLimitReachedError,
  ValidationError,
  type DomainError,
  type DomainErrorClass,
} from './errors.ts';

/** Messages passed by the code that throws them: each is a literal in that code (see the test). */
export const CASE_MESSAGES = {
  slotRejected: 'The venue is paused and takes no holds.',
  invalidHoldState: 'The booking is already REFUNDED.',
  idempotencyKeyMismatch: 'This idempotency_key was already used for a different request.',
} as const;

const examples = new Map<DomainErrorClass, () => DomainError>([
  [
    ValidationError,
    () => new ValidationError([{ field: 'venue_id', message: 'must be a UUID', in: 'query' }]),
  ],
  [NotOwnerError, () => new NotOwnerError('booking')],
  [RouteNotFoundError, () => new RouteNotFoundError('GET', '/api/v1/bookings/x/receipt')],
  [PayloadTooLargeError, () => new PayloadTooLargeError(BODY_LIMIT_BYTES)],
  [RateLimitExceededError, () => new RateLimitExceededError(12)],
  [ServiceUnavailableError, () => new ServiceUnavailableError()],
  [SlotRejectedError, () => new SlotRejectedError(CASE_MESSAGES.slotRejected)],
  [InvalidHoldStateError, () => new InvalidHoldStateError(CASE_MESSAGES.invalidHoldState)],
  [IdempotencyKeyMismatchError, () => new IdempotencyKeyMismatchError(CASE_MESSAGES.idempotencyKeyMismatch)],
  [SubscriptionLimitReachedError, () => new SubscriptionLimitReachedError(MAX_SUBSCRIPTIONS)],
  [HoldInGroupError, () => new HoldInGroupError('6a1f0c3e-2b4d-4e8f-9a7c-1d3e5f7a9b2c')],
  [StreamLimitReachedError, () => new StreamLimitReachedError(STREAMS_PER_PARTNER, 5)],
  [
    ItemsRejectedError,
    () =>
      itemsRefused('items', [
        { index: 1, reason: 'LEAD_TIME' },
        { index: 2, reason: 'TAKEN' },
      ]),
  ],
  [ItemsTakenError, () => itemsRefused('items', [{ index: 0, reason: 'TAKEN' }])],
  [ItemsInConflictError, () => itemsRefused('items', [{ index: 3, reason: 'TRANSFORMATION_CONFLICT' }])],
  [
    DeliveryNotDeadLetteredError,
    () =>
      new DeliveryNotDeadLetteredError('The delivery is delivered; only a dead letter can be redelivered.'),
  ],
]);

/** A real instance of `cls`: as the service builds it. */
export function exampleError(cls: DomainErrorClass): DomainError {
  const make = examples.get(cls);
  if (make) return make();
  return new (cls as unknown as new () => DomainError)();
}
