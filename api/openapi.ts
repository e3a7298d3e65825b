/**
 * The OpenAPI 3.0.3 document, generated from the route declarations: the same zod schemas that
 * validate requests describe them here, so the document cannot drift from behaviour. Schemas with
 * a `.meta({ id })` become components; every route lists its own errors plus the ones every route
 * of its kind can answer (400, 408 and 431 for requests the HTTP server cannot read, and 400 for
 * invalid input; 413 and 415 for routes with a body; 401, 429 and 503 —
 * the database cannot serve — for keyed routes; 500), so that partners' validating proxies and
 * fuzzers find every status the service can send.
 */
import { exampleError } from './error-examples.ts';
import { z } from 'zod';
import { errorBody, statusOf } from './middleware/errors.ts';
import {
  HeadersTooLargeError,
  PayloadTooLargeError,
  RateLimitExceededError,
  RequestTimeoutError,
  ServiceUnavailableError,
  UnauthenticatedError,
  UnsupportedMediaTypeError,
  ValidationError,
  type DomainErrorClass,
} from './errors.ts';
import { API_PREFIX, type Route } from './route.ts';
import { LIVE_WHILE_STARTING } from './server.ts';
import { ErrorBody } from './schemas/shared.ts';

type Json = Record<string, unknown>;

const HEADERS = {
  'X-Request-Id': { description: 'The request id (echoed or generated).', schema: { type: 'string' } },
  'X-RateLimit-Limit': {
    description:
      'Requests allowed per 60-second window. The three rate-limit headers come on every answer to a ' +
      'request whose key was read and found valid; not on a 401, nor on an answer the HTTP server gives ' +
      'before the request is read (a malformed request line or framing: 400; 408; 431), nor on a 503 ' +
      'when the key could not be looked up.',
    schema: { type: 'integer' },
  },
  'X-RateLimit-Remaining': { description: 'Requests left in the window.', schema: { type: 'integer' } },
  'X-RateLimit-Reset-Ms': {
    description: 'Milliseconds until the oldest request in the window leaves it.',
    schema: { type: 'integer' },
  },
  'Retry-After': { description: 'Seconds to wait before retrying.', schema: { type: 'integer' } },
  'Cache-Control': {
    description:
      '`no-store` on every answer to a keyed route, errors included: no cache may keep one partner’s answer. ' +
      'The availability stream sends `no-cache, no-transform`.',
    schema: { type: 'string' },
  },
};

const InternalErrorExample = {
  error: 'INTERNAL_ERROR',
  message: 'Something went wrong on our side; the request id identifies it.',
  request_id: 'b5c1f7e2-3a4d-4f6e-9c8b-1d2e3f4a5b6c',
};

/** Tags, in the order the document lists them, with what they group. */
const TAGS: Record<string, string> = {
  'Contract and health': 'Unauthenticated: service health and this document.',
  Discovery: 'The venues and bookable resources granted to you.',
  Availability: 'Slots, prices and availability hints for a venue-local date.',
  Holds: 'The reservation and mutual-exclusion gate: hold a slot, then confirm or release it.',
  'Hold groups':
    'Several windows at one venue (courts, a pitch and a changing room) held all or nothing in one call, then ' +
    'confirmed or released as one.',
  Series:
    'A weekly window on one resource (a league night, a coaching block) checked whole, kept on the venue’s ' +
    'clock and held as one hold group; then cancelled or refunded from any occurrence on.',
  Bookings: 'Confirmed holds: confirm, read, cancel, refund.',
  Packages: 'Prepaid credit packages: sell one to a customer, then pay for bookings with its credits.',
  Waitlist: 'Customers waiting for a sold-out resource and date; promoted when a window is freed.',
  Webhooks:
    'Signed callbacks for every hold and booking change and waitlist promotion at your venues, and their ' +
    'delivery record.',
  Events: 'Every event of your venues, to page through: recover what a webhook endpoint missed.',
};

/** Builds the whole document from the declared routes. */
export function buildOpenApiDocument(routes: readonly Route[], version: string): Json {
  const components: Record<string, Json> = {};
  const paths: Record<string, Record<string, Json>> = {};
  for (const route of routes) {
    (paths[route.path] ??= {})[route.method.toLowerCase()] = operation(route, components);
  }
  return {
    openapi: '3.0.3',
    info: {
      title: 'Partner Booking API',
      version,
      description:
        'Find slots at sports venues, hold them, confirm bookings after taking payment, and hear about ' +
        'every change through signed webhooks. Every keyed request counts against a 60-second sliding ' +
        'window per API key.',
      contact: { name: 'Platform operators (keys, grants and rate limits are arranged with them)' },
      license: { name: 'Proprietary' },
    },
    servers: [{ url: API_PREFIX }],
    tags: [...new Set(routes.map((r) => r.tag))].map((name) => ({ name, description: TAGS[name] ?? name })),
    paths,
    components: {
      schemas: Object.fromEntries(Object.entries(components).sort(([a], [b]) => a.localeCompare(b))),
      securitySchemes: { ApiKey: { type: 'apiKey', in: 'header', name: 'x-api-key' } },
      headers: HEADERS,
    },
  };
}

function operation(route: Route, components: Record<string, Json>): Json {
  const op: Json = {
    operationId: route.operationId,
    summary: route.summary,
    description: route.description,
    tags: [route.tag],
    security: route.auth ? [{ ApiKey: [] }] : [],
    responses: responses(route, components),
  };
  const parameters = [
    ...parametersOf(route.params, 'path', components),
    ...parametersOf(route.query, 'query', components),
    ...Object.entries(route.requestHeaders ?? {}).map(([name, { description, schema }]) => ({
      name,
      in: 'header',
      required: false,
      description,
      schema,
    })),
  ];
  if (parameters.length) op.parameters = parameters;
  if (route.callbacks) op.callbacks = callbacks(route, components);
  if (route.body) {
    op.requestBody = {
      required: true,
      content: {
        'application/json': {
          schema: toSchema(route.body, 'input', components),
          ...(route.bodyExample !== undefined && { example: route.bodyExample }),
        },
      },
    };
  }
  return op;
}

function callbacks(route: Route, components: Record<string, Json>): Json {
  return Object.fromEntries(
    Object.entries(route.callbacks ?? {}).map(([name, spec]) => [
      name,
      {
        [spec.expression]: {
          post: {
            summary: spec.summary,
            description: spec.description,
            // Deliveries are authenticated by their signature, not by a key.
            security: [],
            parameters: Object.entries(spec.headers).map(([header, description]) => ({
              name: header,
              in: 'header',
              required: true,
              description,
              schema: { type: 'string' },
            })),
            requestBody: {
              required: true,
              content: { 'application/json': { schema: toSchema(spec.body, 'output', components) } },
            },
            responses: {
              '2XX': { description: 'Received: the attempt succeeded.' },
              '400': {
                description: 'Any 4xx (a rejected signature, say) is a failed attempt; it is retried.',
              },
              default: {
                description: 'Any other answer, or none in time, is a failed attempt and is retried.',
              },
            },
          },
        },
      },
    ]),
  );
}

function responses(route: Route, components: Record<string, Json>): Json {
  const out: Json = {};
  const ref = (name: string) => ({ [name]: { $ref: `#/components/headers/${name}` } });
  // Every answer has a request id, and a keyed route's are no-store; only those to a key found
  // valid also carry its rate limit, so a 401 (a key refused, counted against nothing) has none.
  const unmetered: Json = { ...ref('X-Request-Id'), ...(route.auth && ref('Cache-Control')) };
  const headers: Json = route.auth
    ? {
        ...unmetered,
        ...ref('X-RateLimit-Limit'),
        ...ref('X-RateLimit-Remaining'),
        ...ref('X-RateLimit-Reset-Ms'),
      }
    : unmetered;
  for (const [status, spec] of Object.entries(route.responses)) {
    const response: Json = { description: spec.description, headers: { ...headers, ...spec.headers } };
    if (spec.schema) {
      const media: Json = { schema: toSchema(spec.schema, 'output', components) };
      if (spec.example !== undefined) media.example = spec.example;
      response.content = Object.fromEntries(
        (spec.mediaTypes ?? ['application/json']).map((type) => [type, media]),
      );
    }
    out[status] = response;
  }
  // Any request may be one the HTTP server cannot read (400, 408, 431), answered before routing.
  const errorClasses: DomainErrorClass[] = [
    ...(route.errors ?? []),
    ValidationError,
    RequestTimeoutError,
    HeadersTooLargeError,
  ];
  if (route.body) errorClasses.push(PayloadTooLargeError, UnsupportedMediaTypeError);
  if (route.auth) errorClasses.push(UnauthenticatedError, RateLimitExceededError);
  // Keyed routes read the database before anything else, and every route but the liveness probe
  // answers 503 while its process waits for the database or the migrations (api/server.ts); a
  // route that says what its own 503 means (health) keeps its own.
  if (!route.responses[503] && route.path !== LIVE_WHILE_STARTING) errorClasses.push(ServiceUnavailableError);
  toSchema(ErrorBody, 'output', components);
  const byStatus = new Map<number, DomainErrorClass[]>();
  for (const cls of errorClasses) byStatus.set(statusOf(cls), [...(byStatus.get(statusOf(cls)) ?? []), cls]);
  for (const [status, classes] of [...byStatus].sort(([a], [b]) => a - b)) {
    const codes = [...new Set(classes.map((c) => c.code))];
    out[status] = {
      description: `Error: ${codes.join(' or ')}.`,
      headers:
        status === 429 || status === 503
          ? { ...headers, ...ref('Retry-After') }
          : status === 401
            ? unmetered
            : headers,
      content: {
        'application/json': {
          schema: { $ref: '#/components/schemas/Error' },
          examples: Object.fromEntries(classes.map((c) => [`${c.name}`, { value: exampleOf(c) }])),
        },
      },
    };
  }
  out[500] = {
    description: 'Error: INTERNAL_ERROR (nothing internal is disclosed).',
    headers,
    content: {
      'application/json': { schema: { $ref: '#/components/schemas/Error' }, example: InternalErrorExample },
    },
  };
  return out;
}

/** The body the service sends for a real instance of `cls` (api/error-examples.ts). */
function exampleOf(cls: DomainErrorClass): Json {
  return errorBody(exampleError(cls), 'b5c1f7e2-3a4d-4f6e-9c8b-1d2e3f4a5b6c');
}

function parametersOf(
  schema: z.ZodType | undefined,
  location: 'path' | 'query',
  components: Record<string, Json>,
) {
  if (!schema) return [];
  const json = toSchema(schema, 'input', components);
  const properties = (json.properties ?? {}) as Record<string, Json>;
  const required = new Set((json.required ?? []) as string[]);
  return Object.entries(properties).map(([name, property]) => {
    const { description, ...rest } = property;
    const parameter: Json = {
      name,
      in: location,
      required: location === 'path' || required.has(name),
      schema: rest,
    };
    if (description) parameter.description = description;
    return parameter;
  });
}

/** Converts a zod schema to an OpenAPI 3.0 schema, hoisting `.meta({ id })` schemas to components. */
function toSchema(schema: z.ZodType, io: 'input' | 'output', components: Record<string, Json>): Json {
  const json = z.toJSONSchema(schema, { target: 'openapi-3.0', io, unrepresentable: 'any' }) as Json;
  const { definitions, ...root } = json as Json & { definitions?: Record<string, Json> };
  for (const [name, definition] of Object.entries(definitions ?? {}))
    components[name] = tidy(definition) as Json;
  // A schema with an id comes back as a $ref to its own definition, already hoisted above.
  const id = z.globalRegistry.get(schema)?.id;
  if (id && !root.$ref) components[id] = tidy(root) as Json;
  return id ? { $ref: `#/components/schemas/${id}` } : (tidy(root) as Json);
}

/**
 * Rewrites zod's local refs to component refs, drops zod's schema-level `id` and `$schema`, and
 * drops the noise of JS safe-integer bounds. Keys of a `properties` map are field names, kept as is.
 * A nullable enum lists `null` among its values, as OpenAPI 3.0.3 asks (validators otherwise refuse
 * the null the schema allows).
 */
function tidy(value: unknown, isPropertyMap = false): unknown {
  if (Array.isArray(value)) return value.map((item) => tidy(item));
  if (!value || typeof value !== 'object') return value;
  const out: Json = {};
  const { nullable, enum: values } = value as { nullable?: unknown; enum?: unknown[] };
  if (!isPropertyMap && nullable === true && Array.isArray(values) && !values.includes(null)) {
    return tidy({ ...value, enum: [...values, null] });
  }
  for (const [key, inner] of Object.entries(value)) {
    if (isPropertyMap) out[key] = tidy(inner);
    else if (key === '$schema' || key === 'id') continue;
    else if (key === '$ref' && typeof inner === 'string') {
      out[key] = inner.replace('#/definitions/', '#/components/schemas/');
    } else if (isSafeIntegerBound(key, inner)) continue;
    else out[key] = tidy(inner, key === 'properties');
  }
  return out;
}

function isSafeIntegerBound(key: string, value: unknown): boolean {
  return (
    (key === 'minimum' && value === Number.MIN_SAFE_INTEGER) ||
    (key === 'maximum' && value === Number.MAX_SAFE_INTEGER)
  );
}
