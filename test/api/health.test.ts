import test from 'ava';
import { createDb } from '../../db/postgres/knex.ts';
import { testConfig, useTestDatabase } from '../helpers/database.ts';
import { call, startApp } from '../helpers/http.ts';
import { assertDocumented } from '../helpers/openapi.ts';

const database = useTestDatabase(test);

test('GET /health and /api/v1/health: {status, sandbox, timestamp}', async (t) => {
  const server = await startApp(database());
  try {
    for (const path of ['/health', '/api/v1/health']) {
      const res = await call(server, 'GET', path);
      t.is(res.status, 200);
      t.deepEqual(Object.keys(res.body).sort(), ['sandbox', 'status', 'timestamp']);
      t.is(res.body.status, 'ok');
      t.is(res.body.sandbox, true);
      t.true(Math.abs(Date.parse(res.body.timestamp) - Date.now()) < 60_000);
      assertDocumented(t, 'GET /health', res);
    }
  } finally {
    await server.close();
  }
});

test('sandbox is false only in production', async (t) => {
  for (const [env, sandbox] of [
    ['local', true],
    ['sandbox', true],
    ['production', false],
  ] as const) {
    const server = await startApp(database(), { config: testConfig({ SERVICE_ENV: env }) });
    try {
      t.is((await call(server, 'GET', '/health')).body.sandbox, sandbox, env);
    } finally {
      await server.close();
    }
  }
});

test('an unreachable database is reported as 503 unavailable, not as ok', async (t) => {
  const unreachable = createDb('postgres://postgres@127.0.0.1:1/nowhere', { poolMax: 1 });
  const server = await startApp(database(), { db: unreachable });
  try {
    const res = await call(server, 'GET', '/health');
    t.is(res.status, 503);
    t.is(res.body.status, 'unavailable');
    assertDocumented(t, 'GET /health', res);
  } finally {
    await server.close();
    await unreachable.destroy();
  }
});
