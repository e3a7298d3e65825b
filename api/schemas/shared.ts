/**
 * Schemas shared by every route group: the error body, ids, and small scalar shapes. Every string
 * and date a request carries is built from the shapes of `db/platform/input.ts` (re-exported here), so that
 * U+0000, lone surrogates and dates PostgreSQL cannot store are refused as 400 for every field.
 */
import { z } from 'zod';
import { freeText, opaqueText } from '../../db/platform/input.ts';
import { ITEM_REASONS } from '../errors.ts';

export {
  DateOnly,
  DateOnlyBeside,
  DateTimeInput,
  freeText,
  httpUrl,
  opaqueText,
  queryInteger,
} from '../../db/platform/input.ts';

/**
 * A uuid as PostgreSQL reads it (any version, either case), written in lower case from here on, as
 * the database writes it: an id sent in upper case is the same id, in what an answer echoes, in a
 * key's comparison (the same path id) and in what the web process keeps.
 */
export const Uuid = z.guid({ error: 'must be a UUID' }).toLowerCase();

/** An ISO 8601 UTC date-time as every response writes it. */
export const DateTime = z.iso.datetime();

/** A calendar date as every response writes it, YYYY-MM-DD. */
export const DateOnlyOutput = z.iso.date();

/** An idempotency key: 1 to 255 characters, scoped to your API key. */
export const IdempotencyKey = opaqueText({
  min: 1,
  max: 255,
  required: 'is required (1 to 255 characters)',
}).meta({ description: 'Unique per write; a retry with the same key replays the original result.' });

/** The cancel/refund/release body: a key and an optional reason. */
export const ReasonBody = z.object({
  idempotency_key: IdempotencyKey,
  reason: freeText({ max: 500 })
    .optional()
    .meta({ description: 'Free text, trimmed; at most 500 characters.' }),
});
export type ReasonBody = z.infer<typeof ReasonBody>;

/**
 * Accepted and ignored, whatever its value, type, shape or depth: the caller is always the partner of
 * the API key (CONTRACT.md, "Ignored members"). It parses to undefined, so nothing downstream (the
 * idempotency fingerprint included) ever sees or walks it.
 */
export const IgnoredPartnerId = z
  .unknown()
  .optional()
  .transform(() => undefined)
  .meta({ description: 'Ignored if sent.' });

/** One problem of a VALIDATION_ERROR. */
export const FieldProblem = z
  .object({
    field: z.string().meta({ description: 'Dotted path of the offending field; empty for the whole part.' }),
    message: z.string(),
    in: z.enum(['body', 'query', 'path', 'header']),
  })
  .meta({ id: 'FieldProblem' });

/** One problem of an error's `details`: a field, or a refused item of a hold group or series. */
export const ErrorDetail = FieldProblem.extend({
  reason: z
    .enum(ITEM_REASONS)
    .optional()
    .meta({
      description:
        'Why the item (`items.i`) or occurrence (`occurrences.k`) cannot be held; present on the refusals ' +
        'of hold groups and series.',
    }),
  local_date: DateOnlyOutput.optional().meta({
    description: 'The venue-local date of a refused series occurrence.',
  }),
}).meta({ id: 'ErrorDetail' });

/** The spec's error body. */
export const ErrorBody = z
  .object({
    error: z.string().meta({ description: 'Stable machine-readable code, e.g. SLOT_NOT_AVAILABLE.' }),
    message: z.string(),
    request_id: z.string().optional().meta({ description: 'Echo of X-Request-Id.' }),
    details: z
      .array(ErrorDetail)
      .optional()
      .meta({
        description:
          'Present on VALIDATION_ERROR (one entry per problem), and on the refusal of a hold group or series ' +
          '(one entry per failing item or occurrence, with its `reason`).',
      }),
    retry_after_seconds: z.number().int().optional().meta({
      description: 'Present on RATE_LIMIT_EXCEEDED and STREAM_LIMIT_REACHED: the Retry-After seconds.',
    }),
    hold_group_id: z.guid().optional().meta({
      description: 'Present on HOLD_IN_GROUP: the group to confirm or release instead.',
    }),
  })
  .meta({ id: 'Error' });
export type ErrorBody = z.infer<typeof ErrorBody>;
