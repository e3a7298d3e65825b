/**
 * Values valid for a schema of the document, as fast-check arbitraries: the half of the fuzz that
 * must get through validation, so that requests reach the use cases and the database. Where the
 * caller has a pool of real values for a field (ids, slot starts, dates of the world under test),
 * most values come from it; random uuids alone would only ever find "not found". Dates stay within
 * years 1900..9999 in every offset they are written at, since CONTRACT.md refuses the others.
 */
import fc from 'fast-check';
import { resolveSchema, typeOf, type JsonSchema, type OpenApiDocument } from './openapi-operations.ts';
import type { FieldRef, FuzzOptions } from './tagged-samples.ts';

/** Values valid for `schema`; a pool for the field, when given, supplies most of them. */
export function validValue(
  schema: JsonSchema,
  document: OpenApiDocument,
  field?: Omit<FieldRef, 'schema'>,
  options: FuzzOptions = {},
): fc.Arbitrary<unknown> {
  const s = resolveSchema(schema, document);
  let arb = validBase(s, document);
  const pool = field ? options.pool?.({ ...field, schema: s }) : undefined;
  if (pool?.length) {
    arb = fc.oneof(
      { withCrossShrink: true },
      { arbitrary: fc.constantFrom(...pool), weight: options.poolWeight ?? 3 },
      { arbitrary: arb, weight: 1 },
    );
  }
  if (s.nullable === true) {
    arb = fc.oneof({ arbitrary: arb, weight: 5 }, { arbitrary: fc.constant(null), weight: 1 });
  }
  return arb;
}

function validBase(s: JsonSchema, document: OpenApiDocument): fc.Arbitrary<unknown> {
  if (Array.isArray(s.enum) && s.enum.length) return fc.constantFrom(...(s.enum as unknown[]));
  const branches = (s.anyOf ?? s.oneOf) as unknown[] | undefined;
  if (branches?.length) return fc.oneof(...branches.map((b) => validValue(b as JsonSchema, document)));
  switch (typeOf(s)) {
    case 'string':
      return validString(s);
    case 'integer': {
      const min = typeof s.minimum === 'number' ? s.minimum + (s.exclusiveMinimum === true ? 1 : 0) : -1e6;
      const max = typeof s.maximum === 'number' ? s.maximum - (s.exclusiveMaximum === true ? 1 : 0) : 1e6;
      return fc.integer({ min: Math.ceil(min), max: Math.floor(max) });
    }
    case 'number':
      return fc.double({
        min: typeof s.minimum === 'number' ? s.minimum : -1e6,
        max: typeof s.maximum === 'number' ? s.maximum : 1e6,
        noNaN: true,
        noDefaultInfinity: true,
      });
    case 'boolean':
      return fc.boolean();
    case 'array':
      return validArray(s, document);
    case 'object':
      return validObject(s, document);
    default:
      return fc.jsonValue({ maxDepth: 2 });
  }
}

function validArray(s: JsonSchema, document: OpenApiDocument): fc.Arbitrary<unknown> {
  const minLength = (s.minItems as number | undefined) ?? 0;
  const maxLength = Math.min((s.maxItems as number | undefined) ?? minLength + 3, minLength + 4);
  return fc.array(validValue(s.items as JsonSchema, document), { minLength, maxLength });
}

function validObject(s: JsonSchema, document: OpenApiDocument): fc.Arbitrary<unknown> {
  const properties = (s.properties ?? {}) as Record<string, JsonSchema>;
  const required = (s.required ?? []) as string[];
  return fc.record(
    Object.fromEntries(Object.entries(properties).map(([k, p]) => [k, validValue(p, document)])),
    { requiredKeys: required.filter((k) => k in properties) },
  );
}

const dayMs = 86_400_000;
/** Dates whose every rendering (any offset) keeps a year from 1900 to 9999. */
const validInstant = fc.date({
  min: new Date('1900-01-02T00:00:00Z'),
  max: new Date('9999-12-30T00:00:00Z'),
  noInvalidDate: true,
});
const pad = (n: number) => String(n).padStart(2, '0');

/** `instant` written at `offsetMinutes` from UTC, e.g. `2026-11-22T10:00:00+05:30`. */
export function withOffset(instant: Date, offsetMinutes: number): string {
  const local = new Date(instant.getTime() + offsetMinutes * 60_000).toISOString().slice(0, 19);
  if (offsetMinutes === 0) return `${local}Z`;
  const abs = Math.abs(offsetMinutes);
  return `${local}${offsetMinutes < 0 ? '-' : '+'}${pad(Math.floor(abs / 60))}:${pad(abs % 60)}`;
}

function validString(s: JsonSchema): fc.Arbitrary<string> {
  const minLength = (s.minLength as number | undefined) ?? 0;
  const maxLength = (s.maxLength as number | undefined) ?? Math.max(minLength, 40);
  const pattern = typeof s.pattern === 'string' ? new RegExp(s.pattern) : undefined;
  const arb = formatString(s.format, pattern, minLength, maxLength);
  const fits = (v: string) => {
    const length = [...v].length;
    return length >= minLength && length <= maxLength && (!pattern || pattern.test(v));
  };
  // A format generator should fit the schema's own pattern and bounds; where it does not, fall back to
  // the pattern rather than filter forever.
  return arb.chain((v) => (fits(v) ? fc.constant(v) : pattern ? fc.stringMatching(pattern) : fc.constant(v)));
}

/** Strings of the format (dates near today among them), else matching the pattern, else text. */
function formatString(
  format: unknown,
  pattern: RegExp | undefined,
  minLength: number,
  maxLength: number,
): fc.Arbitrary<string> {
  switch (format) {
    case 'uuid':
      return fc.uuid();
    case 'date':
      return fc
        .oneof(
          fc.integer({ min: -3, max: 30 }).map((d) => new Date(Date.now() + d * dayMs)),
          validInstant,
        )
        .map((d) => d.toISOString().slice(0, 10));
    case 'date-time':
      return fc
        .tuple(validInstant, fc.constantFrom(0, 330, -300, 345, -570, 840, -720))
        .map(([d, offset]) => withOffset(d, offset));
    case 'email':
      return fc
        .tuple(
          fc.stringMatching(/^[a-z0-9]{1,12}(\.[a-z0-9]{1,6})?$/),
          fc.stringMatching(/^[a-z][a-z0-9]{0,10}$/),
          fc.constantFrom('com', 'in', 'org', 'co.in'),
        )
        .map(([local, domain, tld]) => `${local}@${domain}.${tld}`);
    case 'uri':
    case 'url':
      return fc.webUrl({ validSchemes: ['https', 'http'] });
    default:
      return pattern
        ? fc.stringMatching(pattern)
        : fc.string({
            unit: fc.oneof(
              { arbitrary: fc.string({ unit: 'grapheme-ascii', minLength: 1, maxLength: 1 }), weight: 4 },
              { arbitrary: fc.string({ unit: 'grapheme-composite', minLength: 1, maxLength: 1 }), weight: 1 },
            ),
            minLength,
            maxLength: Math.min(maxLength, minLength + 30),
          });
  }
}
