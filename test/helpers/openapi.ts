/**
 * Checks real responses against the OpenAPI document the service serves: the status must be
 * documented for the operation and the body must validate against its schema (Ajv, with the
 * document's local refs inlined and OpenAPI 3.0's `nullable` turned into JSON Schema's null type).
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
const compiled = new Map<string, ValidateFunction>();

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

/** Asserts that `result` is a documented response of `operation` ("GET /partner/venues/{venueId}"). */
export function assertDocumented(t: ExecutionContext, operation: string, result: CallResult): void {
  const [method, path] = operation.split(' ') as [string, string];
  const doc = dereferenced();
  const op = (doc.paths as Record<string, Record<string, Json>>)[path]?.[method.toLowerCase()];
  if (!op) return void t.fail(`${operation} is not in the OpenAPI document`);
  const response = (op.responses as Record<string, Json>)[String(result.status)];
  if (!response) return void t.fail(`${operation} does not document status ${result.status}`);
  const content = response.content as Record<string, { schema: Json }> | undefined;
  if (!content) return void t.is(result.text, '', `${operation} ${result.status} documents no body`);
  const key = `${operation} ${result.status}`;
  let validate = compiled.get(key);
  if (!validate) {
    validate = ajv.compile(toJsonSchema(content['application/json']!.schema, doc) as Json);
    compiled.set(key, validate);
  }
  t.true(
    validate(result.body),
    `${key} body does not match the document: ${ajv.errorsText(validate.errors)}`,
  );
}
