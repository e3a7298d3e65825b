import { z } from 'zod';
import { DateTime } from './shared.ts';

/** GET /health: `status` is `ok`, or `unavailable` (with 503) when the database does not answer. */
export const HealthResponse = z
  .object({
    status: z.enum(['ok', 'unavailable']),
    sandbox: z.boolean().meta({ description: 'False only on the production deployment.' }),
    timestamp: DateTime,
  })
  .meta({ id: 'Health' });
export type HealthResponse = z.infer<typeof HealthResponse>;

/** GET /health/live: the process runs. */
export const LiveResponse = z.object({ status: z.literal('ok') }).meta({ id: 'Liveness' });

/** GET /health/ready: whether this process can serve (database answers, migrations current). */
export const ReadyResponse = z
  .object({
    status: z.enum(['ok', 'unavailable']),
    reason: z.string().optional().meta({
      description: 'Why not, when unavailable: the database does not answer, or migrations are pending.',
    }),
  })
  .meta({ id: 'Readiness' });
export type ReadyResponse = z.infer<typeof ReadyResponse>;
