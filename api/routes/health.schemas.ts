import { z } from 'zod';
import { DateTime } from './shared.schemas.ts';

/** GET /health: `status` is `ok`, or `unavailable` (with 503) when the database does not answer. */
export const HealthResponse = z
  .object({
    status: z.enum(['ok', 'unavailable']),
    sandbox: z.boolean().meta({ description: 'False only on the production deployment.' }),
    timestamp: DateTime,
  })
  .meta({ id: 'Health' });
export type HealthResponse = z.infer<typeof HealthResponse>;
