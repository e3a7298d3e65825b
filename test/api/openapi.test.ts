/**
 * The OpenAPI document is part of the product: it must be valid OpenAPI 3.0.3 (checked by a real
 * validator), served identically at both addresses, and describe every route that exists with its
 * security, errors and examples.
 */
import SwaggerParser from '@apidevtools/swagger-parser';
import { createConfig, lintFromString } from '@redocly/openapi-core';
import { Document, Spectral, type RulesetDefinition } from '@stoplight/spectral-core';
import Parsers from '@stoplight/spectral-parsers';
import { oas } from '@stoplight/spectral-rulesets';
import test from 'ava';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { CASE_MESSAGES } from '../../api/error-examples.ts';
import { API_PREFIX } from '../../api/route.ts';
import { routes } from '../../api/routes/index.ts';
import { useTestDatabase } from '../helpers/database.ts';
import { call, useTestServer } from '../helpers/http.ts';
import { ROOT } from '../helpers/processes.ts';

const database = useTestDatabase(test);
const server = useTestServer(test, database);

type Json = Record<string, any>;

async function fetchDocument(): Promise<Json> {
  const res = await call(server(), 'GET', `${API_PREFIX}/openapi.json`);
  return res.body as Json;
}

test('both addresses serve the same OpenAPI 3.0.3 document, without a key', async (t) => {
  const versioned = await call(server(), 'GET', '/api/v1/openapi.json');
  const alias = await call(server(), 'GET', '/openapi.json');
  t.is(versioned.status, 200);
  t.is(versioned.body.openapi, '3.0.3');
  t.deepEqual(alias.body, versioned.body);
});

test('the document validates against the OpenAPI 3.0 schema', async (t) => {
  const doc = await fetchDocument();
  await t.notThrowsAsync(() => SwaggerParser.validate(structuredClone(doc) as never));
});

test('Redocly recommended rules find no error and only the expected warnings', async (t) => {
  const doc = await fetchDocument();
  const problems = await lintFromString({
    source: JSON.stringify(doc),
    absoluteRef: 'openapi.json',
    config: await createConfig({ extends: ['recommended'] }),
  });
  const summary = problems.map((p) => `${p.severity} ${p.ruleId} ${p.location[0]?.pointer ?? ''}`);
  // Expected: a proprietary license has no public URL to point at, and paths of the spec and the
  // contract that are "ambiguous" in Redocly's sense though they never clash, one being GET only
  // and the other POST only: /packages/purchases/purchase would fit both package templates, and
  // /bookings/hold-groups/cancel both /bookings/{bookingId}/cancel and the group's read (refund too).
  const expected = [
    'warn info-license-strict #/info/license/url',
    'warn no-ambiguous-paths #/paths/~1bookings~1{bookingId}~1cancel',
    'warn no-ambiguous-paths #/paths/~1bookings~1{bookingId}~1refund',
    'warn no-ambiguous-paths #/paths/~1packages~1purchases~1{purchaseId}',
  ];
  t.deepEqual(summary.sort(), expected);
});

test('Spectral (spectral:oas, its recommended rules, as the CLI runs it) finds nothing, not even a hint', async (t) => {
  const doc = await fetchDocument();
  const spectral = new Spectral();
  spectral.setRuleset({ extends: [[oas as RulesetDefinition, 'recommended']] });
  const results = await spectral.run(new Document(JSON.stringify(doc), Parsers.Json));
  t.deepEqual(
    results.map((r) => `${r.code} ${r.path.join('.')}: ${r.message}`),
    [],
  );
});

test('every declared route is documented with its method, and nothing else is', async (t) => {
  const doc = await fetchDocument();
  const documented = Object.entries(doc.paths as Json).flatMap(([path, ops]) =>
    Object.keys(ops as Json).map((method) => `${method.toUpperCase()} ${path}`),
  );
  t.deepEqual(documented.sort(), routes.map((r) => `${r.method} ${r.path}`).sort());
  t.deepEqual(doc.servers, [{ url: '/api/v1' }]);
});

test('keyed operations declare the api key and their 401, 429 and 500; open ones declare no security', async (t) => {
  const doc = await fetchDocument();
  t.deepEqual(doc.components.securitySchemes.ApiKey, { type: 'apiKey', in: 'header', name: 'x-api-key' });
  for (const route of routes) {
    const op = doc.paths[route.path][route.method.toLowerCase()];
    const where = `${route.method} ${route.path}`;
    t.truthy(op.operationId, where);
    t.truthy(op.summary, where);
    t.truthy(op.responses['500'], `${where} documents 500`);
    if (route.auth) {
      t.deepEqual(op.security, [{ ApiKey: [] }], where);
      t.truthy(op.responses['401'], `${where} documents 401`);
      t.truthy(op.responses['429'].headers['Retry-After'], `${where} documents 429 with Retry-After`);
      const success = Object.keys(route.responses)[0]!;
      t.truthy(
        op.responses[success].headers['X-RateLimit-Remaining'],
        `${where} documents rate-limit headers`,
      );
    } else {
      t.deepEqual(op.security, [], where);
    }
    if (route.params || route.query || route.body) t.truthy(op.responses['400'], `${where} documents 400`);
  }
});

test('every error response has the Error schema and an example per error code', async (t) => {
  const doc = await fetchDocument();
  const error = doc.components.schemas.Error;
  t.deepEqual(error.required.sort(), ['error', 'message']);
  for (const route of routes) {
    const op = doc.paths[route.path][route.method.toLowerCase()];
    for (const [status, response] of Object.entries(op.responses as Json)) {
      // Declared responses (e.g. health's 503, which keeps the Health shape) are not errors.
      if (Number(status) < 400 || route.responses[Number(status)]) continue;
      const media = response.content['application/json'];
      t.deepEqual(
        media.schema,
        { $ref: '#/components/schemas/Error' },
        `${route.method} ${route.path} ${status}`,
      );
      const examples = media.examples
        ? Object.values(media.examples as Record<string, { value: Json }>).map((e) => e.value)
        : [media.example];
      t.true(examples.length > 0);
      for (const example of examples) t.is(typeof example.error, 'string');
    }
  }
});

test('path parameters are required and typed; success responses carry examples', async (t) => {
  const doc = await fetchDocument();
  const op = doc.paths['/partner/venues/{venueId}'].get;
  t.deepEqual(op.parameters, [
    {
      name: 'venueId',
      in: 'path',
      required: true,
      schema: { type: 'string', format: 'uuid', pattern: op.parameters[0].schema.pattern },
    },
  ]);
  t.truthy(op.responses['200'].content['application/json'].example);
  t.is(
    op.responses['404'].content['application/json'].examples.VenueNotFoundError.value.error,
    'VENUE_NOT_FOUND',
  );
});

test('every request body has an example, valid for the schema the route validates with', async (t) => {
  const doc = await fetchDocument();
  for (const route of routes.filter((r) => r.body)) {
    const media = doc.paths[route.path][route.method.toLowerCase()].requestBody.content['application/json'];
    t.not(media.example, undefined, `${route.operationId} has a request example`);
    const parsed = route.body!.safeParse(media.example);
    t.true(parsed.success, `${route.operationId}: ${parsed.error?.message ?? ''}`);
  }
});

test('error examples carry the messages the service sends', async (t) => {
  const doc = await fetchDocument();
  const messages = new Set<string>();
  for (const methods of Object.values<Json>(doc.paths)) {
    for (const op of Object.values<Json>(methods)) {
      for (const response of Object.values<Json>(op.responses)) {
        const media = response.content?.['application/json'];
        for (const example of Object.values<Json>(media?.examples ?? {})) messages.add(example.value.message);
      }
    }
  }
  t.false(messages.has('A human-readable explanation.'));
  t.true(messages.has('Hold not found.'), 'a fixed message, as the error class makes it');
  t.true(messages.has('Rate limit exceeded; retry after 12 seconds.'));
  // Messages the throwing code passes in: each is a literal there.
  const sources = await Promise.all(
    (await readdir(path.join(ROOT, 'api'), { recursive: true }))
      .filter((file) => file.endsWith('.ts') && !file.endsWith('error-examples.ts'))
      .map((file) => readFile(path.join(ROOT, 'api', file), 'utf8')),
  );
  for (const message of Object.values(CASE_MESSAGES)) {
    t.true(messages.has(message), message);
    t.true(
      sources.some((source) => source.includes(`'${message}'`)),
      `"${message}" is thrown somewhere`,
    );
  }
});
