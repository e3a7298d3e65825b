/**
 * Checks real responses against the OpenAPI document the service serves: the status must be
 * documented for the operation and the body must validate against its schema (Ajv, with the
 * document's local refs inlined and OpenAPI 3.0's `nullable` turned into JSON Schema's null type).
 * The same validator tells whether a request's own values are what the document asks for.
 */
import { Ajv, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { ExecutionContext } from 'ava';
import { buildOpenApiDocument } from '../../api/openapi.ts';
import { routes } from '../../api/routes/index.ts';
import type { CallResult } from './http.ts';

// ajv-formats is CommonJS with a default export; under ESM it arrives as the module object.
const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

type Json = Record<string, unknown>;
let document: Json | undefined;
const ajv = addFormats(new Ajv({ strict: false, allErrors: true }));

/** The document as `GET /openapi.json` serves it. */
export function openApiDocument(): Json {
  return buildOpenApiDocument(routes, 'test');
}

function dereferenced(): Json {
  document ??= openApiDocument();
  return document;
}

/** Inlines `#/...` refs (the document has no cycles) and maps `nullable` to JSON Schema. */
function toJsonSchema(value: unknown, root: Json): unknown {
  if (Array.isArray(value)) return value.map((item) => toJsonSchema(item, root));
  if (!value || typeof value !== 'object') return value;
  const ref = (value as Json).$ref;
  if (typeof ref === 'string') {
    const target = ref
      .slice(2)
      .split('/')
      .reduce<unknown>((node, key) => (node as Json)[key.replace(/~1/g, '/').replace(/~0/g, '~')], root);
    return toJsonSchema(target, root);
  }
  return nullableToJsonSchema(
    Object.fromEntries(Object.entries(value).map(([k, v]) => [k, toJsonSchema(v, root)])),
  );
}

function nullableToJsonSchema(schema: Json): Json {
  const out: Json = {};
  for (const [k, v] of Object.entries(schema)) if (k !== 'nullable') out[k] = v;
  if (schema.nullable === true) {
    if (typeof out.type === 'string') out.type = [out.type, 'null'];
    else return { anyOf: [out, { type: 'null' }] };
  }
  return out;
}

/** What a response needs for checking: its status, its parsed JSON body, its raw text and headers. */
export type ResponseLike = Pick<CallResult, 'status' | 'body' | 'text'> & { headers?: Headers };

const validators = new WeakMap<Json, Map<string, ValidateFunction>>();

/**
 * What is wrong with `result` as a response of `operation` ("GET /partner/venues/{venueId}") in
 * `doc`: the document built in-process or the one a server serves. Empty when the status is
 * documented for the operation and the body matches its schema (or is empty where none is).
 */
export function responseProblems(doc: Json, operation: string, result: ResponseLike): string[] {
  const [method, path] = operation.split(' ') as [string, string];
  const op = (doc.paths as Record<string, Record<string, Json>>)[path]?.[method.toLowerCase()];
  if (!op) return [`${operation} is not in the OpenAPI document`];
  const response = (op.responses as Record<string, Json>)[String(result.status)];
  if (!response) return [`${operation} does not document status ${result.status}`];
  const content = response.content as Record<string, { schema: Json }> | undefined;
  if (!content) {
    return result.text === '' ? [] : [`${operation} ${result.status} documents no body but one was sent`];
  }
  const mediaType = result.headers?.get('content-type')?.split(';')[0]?.trim() ?? 'application/json';
  if (mediaType !== 'application/json') {
    // A page or an asset: documented as that media type; its bytes are not JSON to validate.
    return content[mediaType]
      ? []
      : [`${operation} ${result.status} sent ${mediaType}, documented ${Object.keys(content).join(', ')}`];
  }
  const schema = content['application/json']?.schema;
  if (!schema) return [`${operation} ${result.status} documents no application/json body`];
  const key = `${operation} ${result.status}`;
  let cache = validators.get(doc);
  if (!cache) validators.set(doc, (cache = new Map()));
  let validate = cache.get(key);
  if (!validate) {
    validate = ajv.compile(toJsonSchema(schema, doc) as Json);
    cache.set(key, validate);
  }
  if (result.body === undefined) return [`${key} body is not JSON: ${result.text.slice(0, 200)}`];
  return validate(result.body)
    ? []
    : [`${key} body does not match the document: ${ajv.errorsText(validate.errors)}`];
}

/** Asserts that `result` is a documented response of `operation` ("GET /partner/venues/{venueId}"). */
export function assertDocumented(t: ExecutionContext, operation: string, result: CallResult): void {
  const problems = responseProblems(dereferenced(), operation, result);
  t.deepEqual(problems, [], problems.join('; '));
}

const schemaValidators = new WeakMap<object, ValidateFunction>();

/** What is wrong with `value` for `schema`, a schema (or `$ref`) of `doc`; empty when it is valid. */
export function schemaProblems(doc: Json, schema: Json, value: unknown): string[] {
  let validate = schemaValidators.get(schema);
  if (!validate) {
    validate = ajv.compile(toJsonSchema(schema, doc) as Json);
    schemaValidators.set(schema, validate);
  }
  if (validate(value)) return [];
  return (validate.errors ?? []).map((e) => `${e.instancePath || '(root)'} ${e.message ?? 'is invalid'}`);
}
