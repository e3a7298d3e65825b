/**
 * What must be refused: the request as the server decodes it, against the document and against
 * CONTRACT.md's hardening answers where the document cannot say it. The fuzz asserts that no such
 * request is answered 2xx; without this, a service that accepted everything valid-looking and
 * ignored the rest would pass.
 */
import { bodyText, type FuzzRequest } from './request.ts';
import { resolveSchema, type OpenApiDocument } from './openapi-operations.ts';
import { schemaProblems } from '../openapi.ts';

const JSON_TYPE = /^application\/json\s*(;|$)/i;
const BODY_LIMIT_BYTES = 64 * 1024;

/**
 * Why this request must not succeed, or nothing: a value the document's schemas refuse (path and
 * query values decoded as Koa decodes them, the body parsed as JSON), a body that is absent, not
 * JSON, not application/json or over 64 KiB, a repeated query parameter, or — beyond what the
 * document can say — a string with U+0000 or a lone surrogate, a date whose year is outside
 * 1900..9999, or a header with a control character. Fields documented as `{}` (accepted and
 * ignored) are not looked into.
 */
export function refusals(document: OpenApiDocument, request: FuzzRequest): string[] {
  const op = request.operation;
  const out: string[] = [];
  const segments = request.path.split('/');
  op.path.split('/').forEach((segment, i) => {
    const param = op.parameters.find((p) => p.in === 'path' && `{${p.name}}` === segment);
    if (!param) return;
    try {
      const value = decodeURIComponent(segments[i] ?? '');
      out.push(...valueRefusals(document, param.schema, value, `path ${param.name}`));
    } catch {
      out.push(`path ${param.name}: malformed percent-encoding`);
    }
  });
  const query = new URLSearchParams(request.query);
  for (const p of op.parameters.filter((q) => q.in === 'query')) {
    const values = query.getAll(p.name);
    if (values.length > 1) out.push(`query ${p.name}: repeated`);
    else if (values[0] === undefined) {
      if (p.required) out.push(`query ${p.name}: missing`);
    } else {
      const numeric =
        (p.schema.type === 'integer' || p.schema.type === 'number') && /^-?\d+$/.test(values[0]);
      const value = numeric ? Number(values[0]) : values[0];
      out.push(...valueRefusals(document, p.schema, value, `query ${p.name}`));
    }
  }
  if (op.body) out.push(...bodyRefusals(document, op.body, request.body));
  if (request.header) out.push(`header ${request.header[0]}: a character HTTP does not allow`);
  return out;
}

function bodyRefusals(
  document: OpenApiDocument,
  schema: Record<string, unknown>,
  body: FuzzRequest['body'],
): string[] {
  if (body.kind === 'none') return ['body: absent'];
  if (!body.contentType || !JSON_TYPE.test(body.contentType))
    return [`body: ${body.contentType ?? 'no'} content type`];
  const text = bodyText(body) ?? '';
  if (Buffer.byteLength(text) > BODY_LIMIT_BYTES) return ['body: over 64 KiB'];
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return ['body: not JSON'];
  }
  return valueRefusals(document, schema, value, 'body');
}

function valueRefusals(
  document: OpenApiDocument,
  schema: Record<string, unknown>,
  value: unknown,
  label: string,
): string[] {
  return [
    ...schemaProblems(document, schema, value).map(
      (p) => `${label}${p.startsWith('(root)') ? p.slice(6) : ` ${p}`}`,
    ),
    ...contractRefusals(document, resolveSchema(schema, document), value, label),
  ];
}

/** CONTRACT.md's refusals the document cannot express, found by walking `value` along `schema`. */
function contractRefusals(
  document: OpenApiDocument,
  schema: Record<string, unknown>,
  value: unknown,
  label: string,
): string[] {
  const described = ['type', 'properties', 'items', 'enum', 'anyOf', 'oneOf', 'allOf', 'format'];
  if (!described.some((key) => key in schema)) return []; // `{}`: accepted and ignored
  if (typeof value === 'string') return stringRefusals(schema, value, label);
  if (Array.isArray(value) && schema.items) {
    return value.flatMap((item, i) =>
      contractRefusals(document, resolveSchema(schema.items, document), item, `${label}.${i}`),
    );
  }
  const properties = schema.properties as Record<string, Record<string, unknown>> | undefined;
  if (value && typeof value === 'object' && properties) {
    return Object.entries(value).flatMap(([key, item]) =>
      properties[key]
        ? contractRefusals(document, resolveSchema(properties[key], document), item, `${label}.${key}`)
        : [],
    );
  }
  return [];
}

/** A string with U+0000 or a lone surrogate, or a date (or date-time) outside years 1900..9999. */
function stringRefusals(schema: Record<string, unknown>, value: string, label: string): string[] {
  const out: string[] = [];
  if (value.includes('\u0000')) out.push(`${label}: contains U+0000`);
  if (!value.isWellFormed()) out.push(`${label}: has a lone surrogate`);
  const year = /^(\d{4})-/.exec(value)?.[1];
  if ((schema.format === 'date' || schema.format === 'date-time') && year && (+year < 1900 || +year > 9999)) {
    out.push(`${label}: year ${year}`);
  }
  return out;
}
