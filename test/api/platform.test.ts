/**
 * The HTTP platform every route stands on: body parsing and its limits, validation details, the
 * error body, request ids, unknown routes and unexpected failures. Two test-only routes exercise
 * the parts that real routes reach only through features.
 */
import test from 'ava';
import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { defineRoute } from '../../api/route.ts';
import { routes } from '../../api/routes/index.ts';
import { useTestDatabase } from '../helpers/database.ts';
import { makePartner } from '../helpers/factories.ts';
import { call, startApp, type TestServer } from '../helpers/http.ts';

const echo = defineRoute({
  method: 'POST',
  path: '/test/echo',
  operationId: 'testEcho',
  summary: 'Echo',
  description: 'Answers with the parsed input.',
  tag: 'Test',
  auth: true,
  query: z.object({ n: z.coerce.number().int().min(1).optional() }),
  body: z.object({
    name: z.string().min(2).max(100),
    count: z.number().int(),
    tags: z.array(z.string()).optional(),
  }),
  responses: { 200: { description: 'The parsed input.' } },
  handler: ({ body, query }) => Promise.resolve({ status: 200, body: { body, query } }),
});
const boom = defineRoute({
  method: 'GET',
  path: '/test/boom',
  operationId: 'testBoom',
  summary: 'Fails',
  description: 'Fails with an unexpected error.',
  tag: 'Test',
  auth: false,
  responses: {},
  handler: () => Promise.reject(new Error('connection string postgres://secret@db')),
});

const database = useTestDatabase(test);
let server: TestServer;
let key: string;
test.before(async () => {
  const db = await database.ready();
  server = await startApp(db, { routes: [...routes, echo, boom] });
  ({ apiKey: key } = await makePartner(db.db, { rateLimit: 100_000 }));
});
test.after.always(() => server?.close());

const ECHO = '/api/v1/test/echo';

test('a valid body is parsed, unknown fields (partner_id too) are dropped', async (t) => {
  const res = await call(server, 'POST', `${ECHO}?n=3`, {
    key,
    body: { name: 'Asha', count: 2, partner_id: 'someone-else', extra: { deep: true } },
  });
  t.is(res.status, 200);
  t.deepEqual(res.body, { body: { name: 'Asha', count: 2 }, query: { n: 3 } });
});

test('every problem in body and query is reported at once as details {field, message, in}', async (t) => {
  const res = await call(server, 'POST', `${ECHO}?n=zero`, {
    key,
    body: { name: 'A', count: 1.5, tags: [1] },
  });
  t.is(res.status, 400);
  t.is(res.body.error, 'VALIDATION_ERROR');
  t.is(typeof res.body.message, 'string');
  const fields = res.body.details.map((d: { field: string; in: string }) => `${d.in}:${d.field}`).sort();
  t.deepEqual(fields, ['body:count', 'body:name', 'body:tags.0', 'query:n']);
  for (const detail of res.body.details) t.is(typeof detail.message, 'string');
});

test('a missing body or a body that is not an object is a 400 on the body', async (t) => {
  for (const rawBody of [undefined, '[]', '"text"', 'null', '42']) {
    const res = await call(server, 'POST', ECHO, {
      key,
      ...(rawBody === undefined ? {} : { rawBody, headers: { 'content-type': 'application/json' } }),
    });
    t.is(res.status, 400, String(rawBody));
    t.is(res.body.details[0].in, 'body');
  }
});

test('malformed JSON is 400 VALIDATION_ERROR', async (t) => {
  for (const rawBody of ['{', '{"name": "x",}', "{'name': 1}", '\u0000', '{"a":1}garbage']) {
    const res = await call(server, 'POST', ECHO, {
      key,
      rawBody,
      headers: { 'content-type': 'application/json' },
    });
    t.is(res.status, 400, rawBody);
    t.is(res.body.error, 'VALIDATION_ERROR');
    t.is(res.body.details[0].message, 'the request body is not valid JSON');
  }
});

test('deeply nested JSON within the size limit is a 4xx, never a 500', async (t) => {
  for (const rawBody of ['['.repeat(60_000), `${'{"a":'.repeat(10_000)}1${'}'.repeat(10_000)}`]) {
    const res = await call(server, 'POST', ECHO, {
      key,
      rawBody,
      headers: { 'content-type': 'application/json' },
    });
    t.is(res.status, 400);
  }
  const nested = `{"name":"ok","count":1,"tags":${'['.repeat(5000)}${']'.repeat(5000)}}`;
  t.is(
    (
      await call(server, 'POST', ECHO, {
        key,
        rawBody: nested,
        headers: { 'content-type': 'application/json' },
      })
    ).status,
    400,
  );
});

test('a body over 64 KiB is 413 PAYLOAD_TOO_LARGE, whether announced or streamed', async (t) => {
  const big = JSON.stringify({ name: 'x'.repeat(70 * 1024), count: 1 });
  const announced = await call(server, 'POST', ECHO, {
    key,
    rawBody: big,
    headers: { 'content-type': 'application/json' },
  });
  t.is(announced.status, 413);
  t.is(announced.body.error, 'PAYLOAD_TOO_LARGE');

  const streamed = await fetch(server.url + ECHO, {
    method: 'POST',
    headers: { 'x-api-key': key, 'content-type': 'application/json' },
    body: new Blob([big]).stream(),
    duplex: 'half',
  });
  t.is(streamed.status, 413);
  t.is(((await streamed.json()) as { error: string }).error, 'PAYLOAD_TOO_LARGE');

  const justUnder = JSON.stringify({ name: 'ok', count: 1, tags: ['x'.repeat(60 * 1024)] });
  t.is(
    (
      await call(server, 'POST', ECHO, {
        key,
        rawBody: justUnder,
        headers: { 'content-type': 'application/json' },
      })
    ).status,
    200,
  );
});

test('a body that is not application/json is 415 UNSUPPORTED_MEDIA_TYPE', async (t) => {
  for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x']) {
    const res = await call(server, 'POST', ECHO, {
      key,
      rawBody: 'name=x',
      headers: { 'content-type': type },
    });
    t.is(res.status, 415, type);
    t.is(res.body.error, 'UNSUPPORTED_MEDIA_TYPE');
  }
  const charset = await call(server, 'POST', ECHO, {
    key,
    rawBody: '{"name":"ok","count":1}',
    headers: { 'content-type': 'application/json; charset=utf-8' },
  });
  t.is(charset.status, 200);
});

test('bodies are UTF-8: other charsets are 415, bytes that are not UTF-8 are 400, never repaired', async (t) => {
  const json = (body: string | Buffer, type = 'application/json') =>
    call(server, 'POST', ECHO, { key, rawBody: body, headers: { 'content-type': type } });
  for (const type of ['application/json; charset=latin1', 'application/json; charset=utf-16']) {
    const res = await json('{"name":"ok","count":1}', type);
    t.is(res.status, 415, type);
    t.is(res.body.error, 'UNSUPPORTED_MEDIA_TYPE');
  }
  for (const type of ['application/json; charset=UTF-8', 'application/json; charset=utf8']) {
    t.is((await json('{"name":"ok","count":1}', type)).status, 200, type);
  }
  const latin1 = Buffer.concat([
    Buffer.from('{"name":"Zo'),
    Buffer.from([0xeb]),
    Buffer.from('","count":1}'),
  ]);
  const res = await json(latin1);
  t.is(res.status, 400);
  t.is(res.body.details[0].message, 'the request body is not valid UTF-8');
  const withBom = await json(
    Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('{"name":"Zoë","count":1}')]),
  );
  t.is(withBom.status, 200);
  t.is(withBom.body.body.name, 'Zoë');
});

test('authentication comes before the body: no key, no parsing', async (t) => {
  const res = await call(server, 'POST', ECHO, {
    rawBody: '{',
    headers: { 'content-type': 'application/json' },
  });
  t.is(res.status, 401);
});

test('odd unicode and random bytes never produce a 500', async (t) => {
  const samples = [
    '{"name":"\\ud800\\udc00\\ud800","count":1}',
    '{"name":"\u202e\u0000\uffff","count":1}',
    '{"name":"😀😀","count":1e308}',
    '{"name":"ok","count":-0}',
    '{"__proto__":{"polluted":true},"name":"ok","count":1}',
    '{"constructor":{"prototype":{"x":1}},"name":"ok","count":1}',
  ];
  for (let i = 0; i < 20; i++) samples.push(randomBytes(200).toString('latin1'));
  for (const rawBody of samples) {
    const res = await call(server, 'POST', ECHO, {
      key,
      rawBody,
      headers: { 'content-type': 'application/json' },
    });
    t.true(
      res.status >= 200 && res.status < 500,
      `${res.status} for ${JSON.stringify(rawBody).slice(0, 60)}`,
    );
  }
  t.is(({} as Record<string, unknown>).polluted, undefined);
});

test('X-Request-Id is echoed when safe, replaced otherwise, and named in error bodies', async (t) => {
  const echoed = await call(server, 'GET', '/api/v1/partner/venues', {
    headers: { 'x-request-id': 'abc.DEF_1:2-3' },
  });
  t.is(echoed.headers.get('x-request-id'), 'abc.DEF_1:2-3');
  t.is(echoed.body.request_id, 'abc.DEF_1:2-3');

  for (const unsafe of ['has space', 'x'.repeat(129), '<script>', 'a/b', '']) {
    const res = await call(server, 'GET', '/health', { headers: { 'x-request-id': unsafe } });
    t.regex(res.headers.get('x-request-id')!, /^[0-9a-f-]{36}$/, JSON.stringify(unsafe));
  }
  const generated = await call(server, 'GET', '/health');
  t.regex(generated.headers.get('x-request-id')!, /^[0-9a-f-]{36}$/);
});

test('unknown routes are 404 NOT_FOUND, with or without a key', async (t) => {
  for (const [method, path] of [
    ['GET', '/api/v1/nothing'],
    ['GET', '/'],
    ['DELETE', '/api/v1/partner/venues'],
    ['POST', '/health'],
    ['GET', '/api/v2/partner/venues'],
  ] as const) {
    for (const options of [{}, { key }]) {
      const res = await call(server, method, path, options);
      t.is(res.status, 404, `${method} ${path}`);
      t.is(res.body.error, 'NOT_FOUND');
      t.is(typeof res.body.request_id, 'string');
    }
  }
});

test('a malformed percent-escape in the path is a 400, not a 500', async (t) => {
  const res = await call(server, 'GET', '/api/v1/partner/venues/%E0%A4%A', { key });
  t.is(res.status, 400);
  t.is(res.body.error, 'VALIDATION_ERROR');
});

test('an unexpected failure is a 500 INTERNAL_ERROR that leaks nothing', async (t) => {
  const res = await call(server, 'GET', '/api/v1/test/boom', { headers: { 'x-request-id': 'trace-me' } });
  t.is(res.status, 500);
  t.deepEqual(Object.keys(res.body).sort(), ['error', 'message', 'request_id']);
  t.is(res.body.error, 'INTERNAL_ERROR');
  t.is(res.body.request_id, 'trace-me');
  t.false(res.text.includes('postgres://'));
});
