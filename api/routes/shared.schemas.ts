/** Schemas shared by every route group: the error body, ids, and small scalar shapes. */
import { z } from 'zod';

/** A uuid as PostgreSQL reads it (any version, either case). */
export const Uuid = z.guid({ error: 'must be a UUID' });

/** An ISO 8601 UTC date-time as every response writes it. */
export const DateTime = z.iso.datetime();

/** One problem of a VALIDATION_ERROR. */
export const FieldProblem = z
  .object({
    field: z.string().meta({ description: 'Dotted path of the offending field; empty for the whole part.' }),
    message: z.string(),
    in: z.enum(['body', 'query', 'path', 'header']),
  })
  .meta({ id: 'FieldProblem' });

/** The spec's error body. */
export const ErrorBody = z
  .object({
    error: z.string().meta({ description: 'Stable machine-readable code, e.g. SLOT_NOT_AVAILABLE.' }),
    message: z.string(),
    request_id: z.string().optional().meta({ description: 'Echo of X-Request-Id.' }),
    details: z.array(FieldProblem).optional().meta({ description: 'Present on VALIDATION_ERROR.' }),
    retry_after_seconds: z.number().int().optional().meta({ description: 'Present on RATE_LIMIT_EXCEEDED.' }),
  })
  .meta({ id: 'Error' });
export type ErrorBody = z.infer<typeof ErrorBody>;
