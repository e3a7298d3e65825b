/**
 * The single route-declaration type. A route states its method, path, schemas, responses and the
 * domain errors it can answer once; `api/app.ts` builds the Koa route from it (validation with
 * the same schemas) and `api/openapi.ts` builds the OpenAPI document from it.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { promisify } from 'node:util';
import { brotliCompress, constants as zlibConstants, gzip } from 'node:zlib';
import type { z } from 'zod';
import type { AppDeps } from './context.ts';
import type { DomainErrorClass } from './errors.ts';

/** Where the versioned API lives: every route's path is under it, and the document's too. */
export const API_PREFIX = '/api/v1';

/** A success response of a route, for the OpenAPI document. */
export interface ResponseSpec {
  description: string;
  /** Absent for bodiless responses (204). */
  schema?: z.ZodType;
  example?: unknown;
  /** The body's media types, when not JSON (the docs page and its assets, an event stream). */
  mediaTypes?: readonly string[];
  /** Headers this response carries besides those of every response, documented as given. */
  headers?: Record<string, { description: string; schema: Record<string, unknown> }>;
}

/** An outgoing request the route causes (OpenAPI callbacks), e.g. webhook deliveries. */
export interface CallbackSpec {
  /** A runtime expression naming the target URL, e.g. `{$request.body#/endpoint_url}`. */
  expression: string;
  summary: string;
  description: string;
  body: z.ZodType;
  /** Header name → description. */
  headers: Record<string, string>;
}

/** The validated input a handler receives. `partnerId` is the caller on keyed routes, else ''. */
export interface RouteInput<P, Q, B> {
  params: P;
  query: Q;
  body: B;
  partnerId: string;
  /**
   * The body's named members as the client sent them (`namedAsSent()`): what the new writes'
   * idempotency compares (CONTRACT.md: the same key replays only for a body equal as JSON).
   */
  readonly sent: unknown;
  /** The request's headers, as Node parsed them (names in lower case), for the few routes reading one. */
  headers: Readonly<Record<string, string | string[] | undefined>>;
}

/** What a handler answers: a status and a JSON body (none for 204), or bytes of another type. */
export interface RouteResult {
  status: number;
  body?: unknown;
  /** Response headers besides those every response carries. */
  headers?: Record<string, string>;
}

/** A body that is not JSON (a page, a stylesheet, a script), sent as is with its media type. */
export class TypedBytes {
  readonly mediaType: string;
  readonly bytes: Buffer;
  /**
   * The same bytes compressed, for a body that never changes (`precompressed()`): the app sends
   * whichever the client accepts. Dynamic bodies have none, and go as they are.
   */
  compressed?: { br: Buffer; gzip: Buffer };
  /** Set by `precompressed()` at once: its answers vary by Accept-Encoding, compressed forms or not yet. */
  compressible = false;
  constructor(mediaType: string, bytes: Buffer) {
    this.mediaType = mediaType;
    this.bytes = bytes;
  }
}

/**
 * `body`, with its Brotli and gzip forms made once, in the background: for the large bodies that
 * never change (the OpenAPI document, the reference page's script and stylesheet), so that serving
 * them compressed costs nothing per request. Until both forms are ready the body is served as it is:
 * Brotli at its best quality takes seconds for the reference page's script (5 s here), and made on
 * the event loop it held up every request of every partner meanwhile. Never for streams, which
 * must reach the client as they are written.
 */
export function precompressed<B extends TypedBytes>(body: B): B {
  body.compressible = true;
  const br = promisify(brotliCompress)(body.bytes, {
    params: {
      [zlibConstants.BROTLI_PARAM_QUALITY]: 11,
      [zlibConstants.BROTLI_PARAM_SIZE_HINT]: body.bytes.length,
    },
  });
  const gzipped = promisify(gzip)(body.bytes, { level: 9 });
  Promise.all([br, gzipped]).then(
    ([brotli, gz]) => {
      body.compressed = { br: brotli, gzip: gz };
    },
    // Served as it is, then: compression is an optimisation.
    () => undefined,
  );
  return body;
}

/**
 * A JSON body already written as UTF-8 bytes, sent as is (with the JSON content type): for a body
 * too large to build as objects and stringify on every request (availability). `T` is the shape
 * the bytes encode, the route's response schema.
 */
export class JsonBytes<T = unknown> extends TypedBytes {
  declare readonly shape?: T;
  constructor(bytes: Buffer) {
    super('application/json; charset=utf-8', bytes);
  }
}

/**
 * A Server-Sent Events response: the app sends its status and headers at once (with the stream
 * headers: no caching, no buffering by proxies, never compressed), leaves the response open, and
 * hands the request and response to `attach`, which writes events until the stream ends.
 */
export class EventStream {
  readonly attach: (req: IncomingMessage, res: ServerResponse) => void;
  constructor(attach: (req: IncomingMessage, res: ServerResponse) => void) {
    this.attach = attach;
  }
}

/** One declared route. `path` is OpenAPI-style (`/partner/venues/{venueId}`) under `/api/v1`. */
export interface Route<P = unknown, Q = unknown, B = unknown> {
  method: 'GET' | 'POST' | 'DELETE';
  path: string;
  /** Also served at this path outside `/api/v1` (the spec's host-root aliases). */
  rootAlias?: string;
  operationId: string;
  summary: string;
  description: string;
  tag: string;
  /** Whether the route needs `x-api-key` (and so counts against the key's rate limit). */
  auth: boolean;
  params?: z.ZodType<P>;
  query?: z.ZodType<Q>;
  body?: z.ZodType<B>;
  /** A request body as a partner would send it (the document's request example); valid for `body`. */
  bodyExample?: unknown;
  /**
   * Request headers the handler reads itself (from `headers`), documented as optional header
   * parameters: name → description and schema.
   */
  requestHeaders?: Record<string, { description: string; schema: Record<string, unknown> }>;
  responses: Record<number, ResponseSpec>;
  /** Requests the service later sends because of this route, documented as OpenAPI callbacks. */
  callbacks?: Record<string, CallbackSpec>;
  /** Domain errors the handler itself may raise; validation, auth and rate-limit errors are implied. */
  errors?: readonly DomainErrorClass[];
  handler(input: RouteInput<P, Q, B>, deps: AppDeps): Promise<RouteResult>;
}

/** Declares a route; the type parameters are inferred from its schemas. */
export function defineRoute<P = undefined, Q = undefined, B = undefined>(route: Route<P, Q, B>): Route {
  return route;
}
