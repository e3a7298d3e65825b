/**
 * The operations of an OpenAPI 3.0 document, with their parameter and body schemas resolved: what
 * the fuzz generates requests for (`schema-arbitraries.ts`, `request-arbitraries.ts`) and judges
 * answers against (`checks.ts`). `$ref`s are followed into components and `allOf`s merged, so
 * that callers only ever see plain schemas.
 */

/** A JSON Schema object as OpenAPI 3.0 writes it. */
export type JsonSchema = Record<string, unknown>;
/** An OpenAPI 3.0 document (`paths`, `components`, …). */
export type OpenApiDocument = Record<string, unknown>;

/** One operation of the document, its parameter and body schemas resolved. */
export interface Operation {
  operationId: string;
  method: string;
  /** The path template, relative to the document's server (`/bookings/{bookingId}`). */
  path: string;
  parameters: { name: string; in: 'path' | 'query'; required: boolean; schema: JsonSchema }[];
  body: JsonSchema | undefined;
  /** Whether the operation requires the API key. */
  secured: boolean;
}

/** The HTTP methods an operation can have (a path item's other keys are not operations). */
const METHODS = ['get', 'post', 'put', 'patch', 'delete'];

/** Follows `$ref`s (`#/components/...`) until a schema that is not one. */
export function resolveSchema(schema: unknown, document: OpenApiDocument): JsonSchema {
  let current = (schema ?? {}) as JsonSchema;
  for (let hops = 0; typeof current.$ref === 'string'; hops++) {
    if (hops > 32) throw new Error(`$ref cycle at ${current.$ref}`);
    current = current.$ref
      .slice(2)
      .split('/')
      .map((key) => key.replace(/~1/g, '/').replace(/~0/g, '~'))
      .reduce<unknown>((node, key) => (node as Record<string, unknown>)[key], document) as JsonSchema;
  }
  if (Array.isArray(current.allOf)) {
    const parts = current.allOf.map((part) => resolveSchema(part, document));
    const { allOf: _allOf, ...rest } = current;
    return Object.assign({}, ...parts, rest) as JsonSchema;
  }
  return current;
}

/** The schema's type, inferred from `properties` or `items` where `type` is not written. */
export function typeOf(schema: JsonSchema): string | undefined {
  if (typeof schema.type === 'string') return schema.type;
  if (schema.properties) return 'object';
  if (schema.items) return 'array';
  return undefined;
}

/** Every operation of the document, in document order. */
export function operationsOf(document: OpenApiDocument): Operation[] {
  const out: Operation[] = [];
  const paths = document.paths as Record<string, Record<string, JsonSchema>>;
  for (const [path, item] of Object.entries(paths)) {
    for (const [method, op] of Object.entries(item)) {
      if (!METHODS.includes(method)) continue;
      out.push(operationOf(document, path, method, op));
    }
  }
  return out;
}

/** One operation: its path and query parameters, its JSON body schema, whether it needs a key. */
function operationOf(document: OpenApiDocument, path: string, method: string, op: JsonSchema): Operation {
  const parameters = ((op.parameters ?? []) as JsonSchema[])
    .map((p) => resolveSchema(p, document))
    .filter((p) => p.in === 'path' || p.in === 'query')
    .map((p) => ({
      name: p.name as string,
      in: p.in as 'path' | 'query',
      required: p.required === true,
      schema: resolveSchema(p.schema, document),
    }));
  const media = (op.requestBody as { content?: Record<string, { schema?: unknown }> } | undefined)?.content;
  const bodySchema = media?.['application/json']?.schema;
  const security = (op.security ?? document.security ?? []) as unknown[];
  return {
    operationId: (op.operationId as string | undefined) ?? `${method} ${path}`,
    method: method.toUpperCase(),
    path,
    parameters,
    body: bodySchema === undefined ? undefined : resolveSchema(bodySchema, document),
    secured: security.some((s) => Object.keys(s as object).length > 0),
  };
}
