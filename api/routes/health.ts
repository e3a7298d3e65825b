/** GET /health: liveness that tells the truth about the database. */
import { defineRoute } from '../route.ts';
import { isDatabaseReachable } from '../use-cases/check-health.ts';
import { HealthResponse } from './health.schemas.ts';

const example = { status: 'ok', sandbox: true, timestamp: '2026-11-22T00:30:00.000Z' };

export const healthRoutes = [
  defineRoute({
    method: 'GET',
    path: '/health',
    rootAlias: '/health',
    operationId: 'getHealth',
    summary: 'Service health',
    description:
      'Unauthenticated. Also served at `/health` on the host root. 503 when the database is unreachable.',
    tag: 'Contract and health',
    auth: false,
    responses: {
      200: { description: 'The service and its database answer.', schema: HealthResponse, example },
      503: {
        description: 'The database does not answer.',
        schema: HealthResponse,
        example: { ...example, status: 'unavailable' },
      },
    },
    async handler(_input, { db, config }) {
      const up = await isDatabaseReachable(db);
      const body: HealthResponse = {
        status: up ? 'ok' : 'unavailable',
        sandbox: config.sandbox,
        timestamp: new Date().toISOString(),
      };
      return { status: up ? 200 : 503, body };
    },
  }),
];
