/**
 * GET /health: the spec's health, which tells the truth about the database; and the probes
 * orchestrators use (CONTRACT.md, "Metrics and probes"): /health/live (the process runs; touches no
 * database) and /health/ready (the database answers and its migrations are current).
 */
import { readyAnswer } from '../../db/platform/metrics-server.ts';
import { defineRoute } from '../route.ts';
import { databaseReachable, readiness } from '../../db/schema/readiness.ts';
import { HealthResponse, LiveResponse, ReadyResponse } from '../schemas/health.ts';

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
      const up = await databaseReachable(db);
      const body: HealthResponse = {
        status: up ? 'ok' : 'unavailable',
        sandbox: config.sandbox,
        timestamp: new Date().toISOString(),
      };
      return { status: up ? 200 : 503, body };
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/health/live',
    rootAlias: '/health/live',
    operationId: 'getLiveness',
    summary: 'Liveness probe',
    description: 'Unauthenticated, not rate limited, touches no database: 200 while the process runs.',
    tag: 'Contract and health',
    auth: false,
    responses: { 200: { description: 'The process runs.', schema: LiveResponse, example: { status: 'ok' } } },
    handler() {
      return Promise.resolve({ status: 200, body: { status: 'ok' } });
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/health/ready',
    rootAlias: '/health/ready',
    operationId: 'getReadiness',
    summary: 'Readiness probe',
    description:
      'Unauthenticated, not rate limited: 200 when the database answers and every migration this code ships ' +
      'is applied; 503 with the reason otherwise (send traffic elsewhere until it is 200).',
    tag: 'Contract and health',
    auth: false,
    responses: {
      200: { description: 'Ready to serve.', schema: ReadyResponse, example: { status: 'ok' } },
      503: {
        description: 'Not ready: the database does not answer, or migrations are pending.',
        schema: ReadyResponse,
        example: { status: 'unavailable', reason: 'the database does not answer' },
      },
    },
    async handler(_input, { db }) {
      return readyAnswer(await readiness(db));
    },
  }),
];
