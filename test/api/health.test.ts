import test from 'ava';
import { createDb } from '../../db/postgres/knex.ts';
import { PROBE_ANSWER_MS } from '../../db/schema/readiness.ts';
import { testConfig, useTestDatabase } from '../helpers/database.ts';
import { call, startApp } from '../helpers/http.ts';
import { assertDocumented } from '../helpers/openapi.ts';
import { waitFor } from '../helpers/wait.ts';

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

test('probes: /health/live answers without the database; /health/ready needs it and every migration applied', async (t) => {
  const unreachable = createDb('postgres://postgres@127.0.0.1:1/nowhere', { poolMax: 1 });
  const up = await startApp(database());
  const down = await startApp(database(), { db: unreachable });
  try {
    for (const path of ['/health/live', '/api/v1/health/live']) {
      for (const server of [up, down]) {
        const live = await call(server, 'GET', path);
        t.is(live.status, 200, path);
        t.deepEqual(live.body, { status: 'ok' });
        assertDocumented(t, 'GET /health/live', live);
      }
    }
    for (const path of ['/health/ready', '/api/v1/health/ready']) {
      const ready = await call(up, 'GET', path);
      t.deepEqual([ready.status, ready.body], [200, { status: 'ok' }], path);
      assertDocumented(t, 'GET /health/ready', ready);
      const unready = await call(down, 'GET', path);
      t.deepEqual(
        [unready.status, unready.body],
        [503, { status: 'unavailable', reason: 'the database does not answer' }],
      );
      assertDocumented(t, 'GET /health/ready', unready);
    }
    // A database behind this code (a deploy that has not migrated yet) is not ready.
    const { db } = database();
    const [latest] = await db('knex_migrations').orderBy('id', 'desc').limit(1);
    await db('knex_migrations').where({ id: latest.id }).delete();
    try {
      // An answer stands for a second (PROBE_ANSWER_MS).
      let behind = await call(up, 'GET', '/health/ready');
      await waitFor(async () => (behind = await call(up, 'GET', '/health/ready')).status === 503);
      t.deepEqual(behind.body, { status: 'unavailable', reason: `migrations pending: ${latest.name}` });
    } finally {
      await db('knex_migrations').insert(latest);
    }
    await waitFor(async () => (await call(up, 'GET', '/health/ready')).status === 200);
  } finally {
    await up.close();
    await down.close();
    await unreachable.destroy();
  }
});

test('the probes check the database at most once a second, however often they are called', async (t) => {
  const db = createDb(database().url, { poolMax: 2 });
  let queries = 0;
  db.on('query', () => queries++);
  const server = await startApp(database(), { db });
  try {
    const started = performance.now();
    const answers = await Promise.all(
      Array.from({ length: 60 }, (_, i) => call(server, 'GET', i % 2 ? '/health/ready' : '/health')),
    );
    t.true(answers.every((a) => a.status === 200));
    // Per second begun: one reachability check (one query) and one readiness check (three).
    const seconds = Math.floor((performance.now() - started) / PROBE_ANSWER_MS) + 1;
    t.true(queries <= 4 * seconds, `${queries} queries in ${seconds} s`);
  } finally {
    await server.close();
    await db.destroy();
  }
});
