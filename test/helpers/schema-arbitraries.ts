/**
 * fast-check arbitraries generated from an OpenAPI 3.0 document, to fuzz every operation with what
 * the document allows and with what the service must refuse. For each operation it generates path
 * parameters, query parameters and a JSON body from the operation's schemas (`$ref`s followed into
 * components). Each field gets either a value valid for its schema — drawn partly from a pool of
 * real values the caller supplies, so that requests reach the use cases and the database — or a
 * hostile one: U+0000 (leading, inside, trailing), lone surrogates, control and exotic characters,
 * 10,000-character and empty strings, extreme and impossible dates, huge, negative, fractional and
 * string-typed numbers, wrong types, null where the schema is not nullable. On top: missing
 * required fields, unknown extra fields, bodies that are not objects, not JSON, not
 * `application/json` or over 64 KiB, repeated query parameters, malformed percent-escapes, and a
 * credential: the valid key mostly, else none, a wrong or malformed one, one with U+0000, the
 * valid one twice, or another partner's.
 *
 * Every hostile choice is tagged (`body.slot_start:date-impossible`), so a failure names the input
 * shape behind it. Every choice lists its valid alternative first (with cross-shrinking), so
 * fast-check shrinks a counterexample down to the hostile fields that matter. No I/O: the caller
 * sends the requests (only the clock is read, for dates near today).
 */
import fc from 'fast-check';

/** A JSON Schema object as OpenAPI 3.0 writes it. */
export type JsonSchema = Record<string, unknown>;
/** An OpenAPI 3.0 document (`paths`, `components`, …). */
export type OpenApiDocument = Record<string, unknown>;
/** Where an operation's input lives (headers are the caller's business). */
export type InputLocation = 'path' | 'query' | 'body';

/** One input field, as the pool callback sees it. `path` is dotted (`event_types.0`). */
export interface FieldRef {
  operationId: string;
  location: InputLocation;
  path: string;
  name: string;
  schema: JsonSchema;
}

/** How to generate. */
export interface FuzzOptions {
  /** Real values for a field (ids, slot starts, dates of the world under test), or undefined. */
  pool?: (field: FieldRef) => readonly unknown[] | undefined;
  /** Relative odds of a pooled value against a generated valid one, where a pool exists (default 3 to 1). */
  poolWeight?: number;
  /** Relative odds of a valid and of a hostile value for each field (default 6 to 1). */
  validWeight?: number;
  hostileWeight?: number;
}

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

/** Which credential a request carries; `other` is another partner's valid key. */
export type Credential = 'valid' | 'other' | 'none' | 'wrong' | 'malformed' | 'nul' | 'twice';

/** The body of a generated request. */
export type BodyPart =
  | { kind: 'none' }
  | { kind: 'json'; value: unknown; contentType: string | undefined }
  | { kind: 'text'; text: string; contentType: string | undefined };

/** A generated request, its target already percent-encoded (relative to the document's server). */
export interface FuzzRequest {
  operation: Operation;
  path: string;
  /** The query string without `?`, possibly empty. */
  query: string;
  credential: Credential;
  body: BodyPart;
  /** The hostile choices that made it (empty for an all-valid request). */
  tags: string[];
}

/** A generated value and the hostile choices inside it. */
interface Sample {
  value: unknown;
  tags: string[];
}

/** Text already percent-encoded for a URL, written as is (malformed escapes, `%00`). */
class Encoded {
  readonly text: string;
  constructor(text: string) {
    this.text = text;
  }
}

/** JSON written verbatim (`-0`, `1e400`): Node 24's `JSON.rawJSON`, missing from TypeScript's lib. */
const rawJson = (text: string): unknown => (JSON as unknown as { rawJSON(t: string): unknown }).rawJSON(text);

const ABSENT = Symbol('absent');
const LONG = 10_000;
const FAMILY = '\u{1F469}\u200D\u{1F469}\u200D\u{1F467}\u200D\u{1F466}';

/** Hostile strings for any string field, by category; lengths are for ids, keys and names alike. */
const HOSTILE_STRINGS: readonly (readonly [string, string])[] = [
  ['nul-only', '\u0000'],
  ['nul-leading', '\u0000nul'],
  ['nul-inside', 'in\u0000side'],
  ['nul-trailing', 'trail\u0000'],
  ['nul-escaped-text', '\\u0000'],
  ['lone-surrogate', '\ud800'],
  ['lone-surrogate', '\udfff'],
  ['lone-surrogate', 'ab\ud800cd'],
  ['reversed-surrogates', '\udfff\ud800'],
  ['control', '\u0001\u0002'],
  ['control', 'bell\u0007'],
  ['control', '\u001b[2J'],
  ['control', 'del\u007f'],
  ['control', 'nel\u0085'],
  ['control', 'line\r\nbreak'],
  ['exotic', `Zo\u00eb ${FAMILY} \u{1F3F8}`],
  ['exotic', '\u202eRao Asha'],
  ['exotic', 'A\u0301sha\u0308'],
  ['exotic', '\ufeffBOM'],
  ['exotic', 'zero\u200bwidth'],
  ['exotic', '\u{1D573}\u{1D586}\u{1D58C}'],
  ['exotic', 'sep\u2028ara\u2029tor'],
  ['empty', ''],
  ['whitespace', ' '],
  ['whitespace', ' \t\n '],
  ['whitespace', '\u00a0\u3000'],
  ['long-10k', 'a'.repeat(LONG)],
  ['long-10k', '9'.repeat(LONG)],
  ['long-10k', FAMILY.repeat(LONG / FAMILY.length)],
  ['long-10k', ' '.repeat(LONG)],
  ['injection', "' or 1=1; drop table bookings; --"],
  ['injection', '%00'],
  ['injection', '../../etc/passwd'],
  ['injection', '<script>alert(1)</script>'],
];

/** Hostile date strings: years outside 1900..9999, dates that do not exist, other shapes. */
const HOSTILE_DATES: readonly (readonly [string, string])[] = [
  ['date-year-0000', '0000-01-01'],
  ['date-year-0001', '0001-01-01'],
  ['date-year-1899', '1899-12-31'],
  ['date-year-9999', '9999-12-31'],
  ['date-year-10000', '10000-01-01'],
  ['date-year-10000', '+010000-01-01'],
  ['date-negative-year', '-000001-01-01'],
  ['date-impossible', '2027-02-29'],
  ['date-impossible', '2026-13-01'],
  ['date-impossible', '2026-00-10'],
  ['date-impossible', '2026-04-31'],
  ['date-shape', '2026-1-1'],
  ['date-shape', '20261122'],
  ['date-shape', '2026-11-22T00:00:00Z'],
  ['date-shape', ' 2026-11-22'],
  ['date-shape', '\uff12\uff10\uff12\uff16-11-22'],
];

/** Hostile date-times: extreme years, impossible dates and times, bad or missing offsets. */
const HOSTILE_DATE_TIMES: readonly (readonly [string, string])[] = [
  ['datetime-year-0000', '0000-01-01T00:00:00Z'],
  ['datetime-year-0001', '0001-01-01T00:00:00Z'],
  ['datetime-year-1899', '1899-12-31T23:00:00Z'],
  ['datetime-year-1899-utc', '1900-01-01T00:00:00+05:30'],
  ['datetime-year-9999', '9999-12-31T23:59:59Z'],
  ['datetime-year-10000-utc', '9999-12-31T23:00:00-05:00'],
  ['datetime-year-10000', '10000-01-01T00:00:00Z'],
  ['datetime-impossible', '2027-02-29T10:00:00Z'],
  ['datetime-impossible', '2026-13-01T10:00:00Z'],
  ['datetime-impossible', '2026-11-22T24:30:00Z'],
  ['datetime-impossible', '2026-11-22T24:00:00Z'],
  ['datetime-impossible', '2026-11-22T10:60:00Z'],
  ['datetime-leap-second', '2026-12-31T23:59:60Z'],
  ['datetime-offset', '2026-11-22T10:00:00+25:00'],
  ['datetime-offset', '2026-11-22T10:00:00+05:61'],
  ['datetime-offset', '2026-11-22T10:00:00+0530'],
  ['datetime-no-offset', '2026-11-22T10:00:00'],
  ['datetime-shape', '2026-11-22 10:00:00Z'],
  ['datetime-shape', '2026-11-22'],
  ['datetime-shape', '2026-11-22T10:00:00.1234567890123Z'],
  ['datetime-shape', '1763805600'],
];

const HOSTILE_UUIDS: readonly (readonly [string, string])[] = [
  ['uuid-nil', '00000000-0000-0000-0000-000000000000'],
  ['uuid-max', 'ffffffff-ffff-ffff-ffff-ffffffffffff'],
  ['uuid-shape', '0000000000000000000000000000000'],
  ['uuid-shape', 'zzzzzzzz-zzzz-zzzz-zzzz-zzzzzzzzzzzz'],
  ['uuid-shape', '{6f1c2a9e-1b7d-4c3e-9a8f-2d4b6c8e0f1a}'],
  ['uuid-shape', 'urn:uuid:6f1c2a9e-1b7d-4c3e-9a8f-2d4b6c8e0f1a'],
  ['uuid-shape', '6f1c2a9e1b7d4c3e9a8f2d4b6c8e0f1a'],
];

const HOSTILE_EMAILS: readonly (readonly [string, string])[] = [
  ['email-shape', 'a@b'],
  ['email-shape', '@example.com'],
  ['email-shape', 'a@@example.com'],
  ['email-shape', 'a b@example.com'],
  ['email-unicode', '\u00fcn\u00ef@c\u00f6d\u00e9.com'],
  ['email-long', `${'x'.repeat(300)}@example.com`],
];

const HOSTILE_URIS: readonly (readonly [string, string])[] = [
  ['uri-shape', 'http://'],
  ['uri-shape', '//example.com/hooks'],
  ['uri-shape', 'example.com/hooks'],
  ['uri-scheme', 'ftp://example.com/hooks'],
  ['uri-scheme', 'javascript:alert(1)'],
  ['uri-scheme', 'file:///etc/passwd'],
  ['uri-space', 'http://exa mple.com/hooks'],
  ['uri-control', 'http://example.com/\u0000hooks'],
  ['uri-control', 'http://example.com/\thooks'],
  ['uri-surrogate', 'http://example.com/\ud800'],
  ['uri-escape', 'http://example.com/%zz'],
  ['uri-credentials', 'http://user:pass@127.0.0.1/hooks'],
  ['uri-port', 'http://127.0.0.1:99999/hooks'],
  ['uri-long', `https://${'a'.repeat(3000)}.example.com/`],
  ['uri-unicode', 'https://b\u00fccher.example/hooks'],
];

/** Hostile numbers for integer and number fields (rawJson: exactly this JSON text). */
function hostileNumbers(schema: JsonSchema): [string, unknown][] {
  const out: [string, unknown][] = [
    ['number-huge', 1e308],
    ['number-huge', -1e308],
    ['number-beyond-safe', rawJson('9007199254740993')],
    ['number-bignum', rawJson('123456789012345678901234567890')],
    ['number-overflow', rawJson('1e400')],
    ['number-negative', -1],
    ['number-zero', 0],
    ['number-negative-zero', rawJson('-0')],
    ['number-fractional', 1.5],
    ['number-int32-overflow', 2 ** 31],
    ['number-as-string', '1'],
    ['number-as-string', '60'],
    ['number-as-string', '1e2'],
    ['number-as-string', '0x10'],
  ];
  if (typeof schema.minimum === 'number') out.push(['number-below-minimum', schema.minimum - 1]);
  if (typeof schema.maximum === 'number') {
    out.push(['number-above-maximum', schema.maximum + 1]);
    out.push(['number-fractional', schema.maximum - 0.5]);
  }
  return out;
}

/** Hostile texts for integer parameters in a query or path (where everything is a string). */
const HOSTILE_NUMERIC_TEXT: readonly (readonly [string, string])[] = [
  ['number-huge', '1e308'],
  ['number-beyond-safe', '9007199254740993'],
  ['number-negative', '-1'],
  ['number-negative-zero', '-0'],
  ['number-zero', '0'],
  ['number-fractional', '1.5'],
  ['number-shape', '1e1'],
  ['number-shape', '0x10'],
  ['number-shape', ' 5'],
  ['number-shape', '+5'],
  ['number-shape', '\u0661\u0662'],
  ['number-shape', 'NaN'],
  ['number-shape', 'Infinity'],
];

/** Malformed or hostile percent-escapes, for path and query values. */
const MALFORMED_ESCAPES: readonly (readonly [string, string])[] = [
  ['escape-malformed', '%'],
  ['escape-malformed', '%zz'],
  ['escape-malformed', 'a%2'],
  ['escape-truncated-utf8', '%E0%A4'],
  ['escape-lone-surrogate', '%ED%A0%80'],
  ['escape-overlong-nul', '%C0%80'],
  ['escape-nul', '%00'],
  ['escape-nul', 'abc%00def'],
  ['escape-slash', 'a%2Fb'],
];

/** Unknown body fields, prototype-pollution keys among them. */
const EXTRA_FIELDS: readonly (readonly [string, unknown])[] = [
  ['unknown_field', 'x'],
  ['id', '6f1c2a9e-1b7d-4c3e-9a8f-2d4b6c8e0f1a'],
  ['status', 'BOOKED'],
  ['price_rupees', 0],
  ['__proto__', { polluted: true }],
  ['constructor', { prototype: { polluted: true } }],
];

/** Bodies that are JSON but not an object. */
const NON_OBJECT_BODIES: readonly (readonly [string, unknown])[] = [
  ['array', []],
  ['array-of-object', [{}]],
  ['string', 'body'],
  ['number', 42],
  ['null', null],
  ['boolean', true],
];

/** Bodies sent as `application/json` that are not JSON. */
const NON_JSON_BODIES: readonly (readonly [string, string])[] = [
  ['truncated', '{"idempotency_key":'],
  ['single-quotes', "{'a': 1}"],
  ['bare-word', 'undefined'],
  ['empty', ''],
  ['whitespace', ' \n'],
  ['bom', '\ufeff{}'],
  ['raw-nul', '{"a":"\u0000"}'],
  ['raw-control', '{"a":"line\nbreak"}'],
  ['deep-nesting', '['.repeat(20_000) + ']'.repeat(20_000)],
  ['trailing-garbage', '{} {}'],
  ['nan', '{"a": NaN}'],
];

/** Content types other than JSON (or none) for a JSON text. */
const OTHER_CONTENT_TYPES: readonly (string | undefined)[] = [
  undefined,
  'text/plain',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=x',
  'application/merge-patch+json',
  'application/json-seq',
];

/** Valid spellings of the JSON content type. */
const JSON_CONTENT_TYPES = ['application/json', 'application/json; charset=utf-8', 'Application/JSON'];

const BODY_LIMIT_PADDING = 70 * 1024;

interface Context {
  document: OpenApiDocument;
  operationId: string;
  location: InputLocation;
  options: FuzzOptions;
}

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

function typeOf(schema: JsonSchema): string | undefined {
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
      if (!['get', 'post', 'put', 'patch', 'delete'].includes(method)) continue;
      const parameters = ((op.parameters ?? []) as JsonSchema[])
        .map((p) => resolveSchema(p, document))
        .filter((p) => p.in === 'path' || p.in === 'query')
        .map((p) => ({
          name: p.name as string,
          in: p.in as 'path' | 'query',
          required: p.required === true,
          schema: resolveSchema(p.schema, document),
        }));
      const media = (op.requestBody as { content?: Record<string, { schema?: unknown }> } | undefined)
        ?.content;
      const bodySchema = media?.['application/json']?.schema;
      const security = (op.security ?? document.security ?? []) as unknown[];
      out.push({
        operationId: (op.operationId as string | undefined) ?? `${method} ${path}`,
        method: method.toUpperCase(),
        path,
        parameters,
        body: bodySchema === undefined ? undefined : resolveSchema(bodySchema, document),
        secured: security.some((s) => Object.keys(s as object).length > 0),
      });
    }
  }
  return out;
}

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
    case 'array': {
      const minLength = (s.minItems as number | undefined) ?? 0;
      const maxLength = Math.min((s.maxItems as number | undefined) ?? minLength + 3, minLength + 4);
      return fc.array(validValue(s.items as JsonSchema, document), { minLength, maxLength });
    }
    case 'object': {
      const properties = (s.properties ?? {}) as Record<string, JsonSchema>;
      const required = (s.required ?? []) as string[];
      return fc.record(
        Object.fromEntries(Object.entries(properties).map(([k, p]) => [k, validValue(p, document)])),
        { requiredKeys: required.filter((k) => k in properties) },
      );
    }
    default:
      return fc.jsonValue({ maxDepth: 2 });
  }
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
  let arb: fc.Arbitrary<string>;
  switch (s.format) {
    case 'uuid':
      arb = fc.uuid();
      break;
    case 'date':
      arb = fc
        .oneof(
          fc.integer({ min: -3, max: 30 }).map((d) => new Date(Date.now() + d * dayMs)),
          validInstant,
        )
        .map((d) => d.toISOString().slice(0, 10));
      break;
    case 'date-time':
      arb = fc
        .tuple(validInstant, fc.constantFrom(0, 330, -300, 345, -570, 840, -720))
        .map(([d, offset]) => withOffset(d, offset));
      break;
    case 'email':
      arb = fc
        .tuple(
          fc.stringMatching(/^[a-z0-9]{1,12}(\.[a-z0-9]{1,6})?$/),
          fc.stringMatching(/^[a-z][a-z0-9]{0,10}$/),
          fc.constantFrom('com', 'in', 'org', 'co.in'),
        )
        .map(([local, domain, tld]) => `${local}@${domain}.${tld}`);
      break;
    case 'uri':
    case 'url':
      arb = fc.webUrl({ validSchemes: ['https', 'http'] });
      break;
    default:
      arb = pattern
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
  const fits = (v: string) => {
    const length = [...v].length;
    return length >= minLength && length <= maxLength && (!pattern || pattern.test(v));
  };
  // A format generator should fit the schema's own pattern and bounds; where it does not, fall back to
  // the pattern rather than filter forever.
  return arb.chain((v) => (fits(v) ? fc.constant(v) : pattern ? fc.stringMatching(pattern) : fc.constant(v)));
}

const tagged = (value: unknown, ...tags: string[]): Sample => ({ value, tags });
const untagged = (value: unknown): Sample => ({ value, tags: [] });

function fromCatalog(label: string, catalog: readonly (readonly [string, unknown])[]): fc.Arbitrary<Sample> {
  return fc.constantFrom(...catalog).map(([category, value]) => tagged(value, `${label}:${category}`));
}

/** A valid value made hostile: U+0000 or a lone surrogate inserted, or white space around it. */
function corrupted(label: string, valid: fc.Arbitrary<unknown>): fc.Arbitrary<Sample> {
  return fc
    .tuple(
      valid.map((v) => (typeof v === 'string' ? v : JSON.stringify(v)) || 'x'),
      fc.constantFrom(
        ['nul-leading', (v: string) => `\u0000${v}`],
        ['nul-inside', (v: string) => `${v.slice(0, v.length >> 1)}\u0000${v.slice(v.length >> 1)}`],
        ['nul-trailing', (v: string) => `${v}\u0000`],
        ['lone-surrogate', (v: string) => `${v}\ud800`],
        ['padded', (v: string) => ` ${v} `],
        ['upper-case', (v: string) => v.toUpperCase()],
      ) as fc.Arbitrary<[string, (v: string) => string]>,
    )
    .map(([v, [category, corrupt]]) => tagged(corrupt(v), `${label}:${category}`));
}

/** JSON values of the wrong type for `schema` (null only where it is not nullable). */
function wrongTypes(s: JsonSchema, document: OpenApiDocument): [string, unknown][] {
  const type = typeOf(s);
  const out: [string, unknown][] = [];
  if (s.nullable !== true) out.push(['wrong-type-null', null]);
  if (type !== 'string') out.push(['wrong-type-string', 'text'], ['wrong-type-string', 'true']);
  if (type !== 'integer' && type !== 'number') out.push(['wrong-type-number', 42], ['wrong-type-number', 0]);
  if (type !== 'boolean') out.push(['wrong-type-boolean', true], ['wrong-type-boolean', false]);
  if (type !== 'array') out.push(['wrong-type-array', []], ['wrong-type-array', ['x', 1]]);
  if (type !== 'object') out.push(['wrong-type-object', {}], ['wrong-type-object', { value: 'x' }]);
  if (type === 'array') {
    const items = resolveSchema(s.items, document);
    const item = items.enum ? (items.enum as unknown[])[0] : 'x';
    out.push(['object-for-array', { 0: item }], ['scalar-for-array', item]);
  }
  return out;
}

/** Hostile JSON values for `schema`, tagged. */
function hostileValue(s: JsonSchema, ctx: Context, label: string, valid: fc.Arbitrary<unknown>) {
  const type = typeOf(s);
  const options: fc.Arbitrary<Sample>[] = [fromCatalog(label, wrongTypes(s, ctx.document))];
  if (type === 'integer' || type === 'number') options.push(fromCatalog(label, hostileNumbers(s)));
  if (type === 'string') options.push(...hostileStringOptions(s, label, valid));
  return fc.oneof(...options);
}

function hostileStringOptions(s: JsonSchema, label: string, valid: fc.Arbitrary<unknown>) {
  const lengths: [string, string][] = [];
  if (typeof s.maxLength === 'number' && s.maxLength < LONG) {
    lengths.push(['too-long', 'x'.repeat(s.maxLength + 1)]);
  }
  if (typeof s.minLength === 'number' && s.minLength > 1)
    lengths.push(['too-short', 'x'.repeat(s.minLength - 1)]);
  const byFormat: Record<string, readonly (readonly [string, string])[]> = {
    uuid: HOSTILE_UUIDS,
    date: HOSTILE_DATES,
    'date-time': HOSTILE_DATE_TIMES,
    email: HOSTILE_EMAILS,
    uri: HOSTILE_URIS,
    url: HOSTILE_URIS,
  };
  const options = [
    fromCatalog(label, [...HOSTILE_STRINGS, ...lengths]),
    corrupted(label, valid),
    fc.string({ unit: 'binary', maxLength: 24 }).map((v) => tagged(v, `${label}:random-unicode`)),
  ];
  const special = byFormat[s.format as string];
  if (special) options.push(fromCatalog(label, special), fromCatalog(label, special));
  if (Array.isArray(s.enum)) {
    options.push(
      fromCatalog(label, [
        ['enum-unknown', 'unknown_value'],
        ['enum-case', String(s.enum[0]).toUpperCase()],
      ]),
    );
  }
  return options;
}

/** A value for one field: valid (pooled) or hostile, objects and arrays mixed field by field. */
function fieldSample(schema: JsonSchema, ctx: Context, path: string): fc.Arbitrary<Sample> {
  const s = resolveSchema(schema, ctx.document);
  const label = `${ctx.location}.${path}`;
  const name =
    path
      .split('.')
      .filter((p) => !/^\d+$/.test(p))
      .at(-1) ?? path;
  const field = { operationId: ctx.operationId, location: ctx.location, path, name };
  const type = typeOf(s);
  if (type === 'object') return objectSample(s, ctx, path);
  if (type === 'array') return arraySample(s, ctx, path);
  const valid = validValue(s, ctx.document, field, ctx.options);
  // `{}` (an ignored field): anything is valid; send some hostile strings anyway, tagged as such.
  if (type === undefined && !s.enum) {
    return fc.oneof(
      { withCrossShrink: true },
      { arbitrary: valid.map(untagged), weight: ctx.options.validWeight ?? 6 },
      {
        arbitrary: fromCatalog(
          label,
          HOSTILE_STRINGS.map(([c, v]) => [`ignored-${c}`, v] as const),
        ),
        weight: ctx.options.hostileWeight ?? 1,
      },
    );
  }
  return fc.oneof(
    { withCrossShrink: true },
    { arbitrary: valid.map(untagged), weight: ctx.options.validWeight ?? 6 },
    { arbitrary: hostileValue(s, ctx, label, valid), weight: ctx.options.hostileWeight ?? 1 },
  );
}

function objectSample(s: JsonSchema, ctx: Context, path: string): fc.Arbitrary<Sample> {
  const properties = Object.entries((s.properties ?? {}) as Record<string, JsonSchema>);
  const required = new Set((s.required ?? []) as string[]);
  const prefix = path ? `${path}.` : '';
  const label = `${ctx.location}${path ? `.${path}` : ''}`;
  const fields = properties.map(([name, p]) => {
    const value = fieldSample(p, ctx, `${prefix}${name}`);
    const absent = fc.constant(tagged(ABSENT, ...(required.has(name) ? [`${label}.${name}:missing`] : [])));
    return required.has(name)
      ? fc.oneof(
          { withCrossShrink: true },
          { arbitrary: value, weight: 40 },
          { arbitrary: absent, weight: 1 },
        )
      : fc.oneof(
          { withCrossShrink: true },
          { arbitrary: absent, weight: 1 },
          { arbitrary: value, weight: 2 },
        );
  });
  const extras = fc.oneof(
    { withCrossShrink: true },
    { arbitrary: fc.constant([] as (readonly [string, unknown])[]), weight: 10 },
    { arbitrary: fc.subarray([...EXTRA_FIELDS], { minLength: 1, maxLength: 2 }), weight: 1 },
  );
  const object = fc.tuple(fc.tuple(...fields), extras).map(([values, extra]) => {
    const out: Record<string, unknown> = {};
    const tags: string[] = [];
    values.forEach((sample, i) => {
      tags.push(...sample.tags);
      if (sample.value !== ABSENT) out[properties[i]![0]] = sample.value;
    });
    for (const [key, value] of extra) {
      // An own property even for `__proto__`, so JSON.stringify writes it.
      Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
      tags.push(`${label}:extra-field(${key})`);
    }
    return { value: out, tags };
  });
  if (!path) return object;
  return fc.oneof(
    { withCrossShrink: true },
    { arbitrary: object, weight: 12 },
    { arbitrary: fromCatalog(label, wrongTypes(s, ctx.document)), weight: 1 },
  );
}

function arraySample(s: JsonSchema, ctx: Context, path: string): fc.Arbitrary<Sample> {
  const label = `${ctx.location}.${path}`;
  const minLength = (s.minItems as number | undefined) ?? 0;
  const maxItems = s.maxItems as number | undefined;
  const items = fc
    .array(fieldSample(s.items as JsonSchema, ctx, `${path}.0`), {
      minLength,
      maxLength: Math.min(maxItems ?? minLength + 3, minLength + 4),
    })
    .map((samples) => ({ value: samples.map((x) => x.value), tags: samples.flatMap((x) => x.tags) }));
  const valid = validValue(s.items as JsonSchema, ctx.document);
  const shapes: fc.Arbitrary<Sample>[] = [fromCatalog(label, wrongTypes(s, ctx.document))];
  if (minLength > 0) shapes.push(fc.constant(tagged([], `${label}:too-few-items`)));
  if (maxItems !== undefined) {
    shapes.push(
      valid.map((v) =>
        tagged(
          Array.from({ length: maxItems + 1 }, () => v),
          `${label}:too-many-items`,
        ),
      ),
    );
  }
  shapes.push(
    valid.map((v) =>
      tagged(
        Array.from({ length: 1000 }, () => v),
        `${label}:1000-items`,
      ),
    ),
  );
  return fc.oneof(
    { withCrossShrink: true },
    { arbitrary: items, weight: 8 },
    { arbitrary: fc.oneof(...shapes), weight: 1 },
  );
}

/** Percent-encodes `text` for a URL; a lone surrogate becomes its (invalid) WTF-8 bytes. */
export function encodeWire(text: string): string {
  let out = '';
  for (const char of text) {
    const code = char.codePointAt(0)!;
    if (code >= 0xd800 && code <= 0xdfff) {
      out += [0xe0 | (code >> 12), 0x80 | ((code >> 6) & 0x3f), 0x80 | (code & 0x3f)]
        .map((b) => `%${b.toString(16).toUpperCase()}`)
        .join('');
    } else out += encodeURIComponent(char);
  }
  return out;
}

/** A value as a URL carries it: strings encoded, numbers and booleans as text, JSON otherwise. */
function wireText(value: unknown): string {
  if (value instanceof Encoded) return value.text;
  if (typeof value === 'string') return encodeWire(value);
  if (typeof value === 'number' || typeof value === 'boolean' || value === null) return String(value);
  return encodeWire(JSON.stringify(value));
}

/** A path or query value: valid (pooled) or hostile, as text (everything in a URL is text). */
function wireSample(schema: JsonSchema, ctx: Context, name: string): fc.Arbitrary<Sample> {
  const s = resolveSchema(schema, ctx.document);
  const label = `${ctx.location}.${name}`;
  const field = { operationId: ctx.operationId, location: ctx.location, path: name, name };
  const valid = validValue(s, ctx.document, field, ctx.options);
  const hostile: fc.Arbitrary<Sample>[] = [
    ...hostileStringOptions({ ...s, type: 'string' }, label, valid),
    fromCatalog(
      label,
      MALFORMED_ESCAPES.map(([c, v]) => [c, new Encoded(v)] as const),
    ),
  ];
  if (typeOf(s) === 'integer' || typeOf(s) === 'number')
    hostile.push(fromCatalog(label, HOSTILE_NUMERIC_TEXT));
  if (ctx.location === 'path') {
    hostile.push(
      valid.map((v) => tagged(new Encoded(`${wireText(v)}%00`), `${label}:escape-nul-trailing`)),
      fc.constant(tagged('0'.repeat(LONG), `${label}:long-10k`)),
    );
  }
  const sample = fc.oneof(
    { withCrossShrink: true },
    { arbitrary: valid.map(untagged), weight: ctx.options.validWeight ?? 6 },
    { arbitrary: fc.oneof(...hostile), weight: ctx.options.hostileWeight ?? 1 },
  );
  // An empty path segment addresses another route; that is not this operation's input.
  return ctx.location === 'path' ? sample.filter((x) => wireText(x.value) !== '') : sample;
}

function queryArbitrary(op: Operation, ctx: Context): fc.Arbitrary<Sample> {
  const params = op.parameters.filter((p) => p.in === 'query');
  const entries = params.map((p) => {
    const value = wireSample(p.schema, ctx, p.name);
    const label = `query.${p.name}`;
    const single = value.map((x) => ({ value: [`${p.name}=${wireText(x.value)}`], tags: x.tags }));
    const repeated = fc.tuple(value, value).map(([a, b]) => ({
      value: [`${p.name}=${wireText(a.value)}`, `${p.name}=${wireText(b.value)}`],
      tags: [...a.tags, ...b.tags, `${label}:repeated`],
    }));
    const odd = fc.constantFrom(
      { value: [p.name], tags: [`${label}:no-equals`] },
      { value: [`${p.name}[]=1`], tags: [`${label}:bracket-name`] },
      { value: [`${p.name}[a]=1`], tags: [`${label}:object-name`] },
    );
    const absent = fc.constant({ value: [] as string[], tags: p.required ? [`${label}:missing`] : [] });
    return p.required
      ? fc.oneof(
          { withCrossShrink: true },
          { arbitrary: single, weight: 40 },
          { arbitrary: absent, weight: 1 },
          { arbitrary: repeated, weight: 2 },
          { arbitrary: odd, weight: 1 },
        )
      : fc.oneof(
          { withCrossShrink: true },
          { arbitrary: absent, weight: 4 },
          { arbitrary: single, weight: 4 },
          { arbitrary: repeated, weight: 1 },
          { arbitrary: odd, weight: 1 },
        );
  });
  const extra = fc.oneof(
    { withCrossShrink: true },
    { arbitrary: fc.constant(untagged([])), weight: 12 },
    {
      arbitrary: fc
        .constantFrom('unknown=1', '__proto__=x', 'constructor[prototype][x]=1', '=', '&&')
        .map((q) => tagged([q], `query:extra-param(${q})`)),
      weight: 1,
    },
  );
  return fc.tuple(fc.tuple(...entries), extra).map(([parts, more]) => ({
    value: [...parts.flatMap((x) => x.value), ...(more.value as string[])].join('&'),
    tags: [...parts.flatMap((x) => x.tags), ...more.tags],
  }));
}

function pathArbitrary(op: Operation, ctx: Context): fc.Arbitrary<Sample> {
  const params = op.parameters.filter((p) => p.in === 'path');
  return fc.tuple(...params.map((p) => wireSample(p.schema, ctx, p.name))).map((samples) => ({
    value: params.reduce((path, p, i) => path.replace(`{${p.name}}`, wireText(samples[i]!.value)), op.path),
    tags: samples.flatMap((x) => x.tags),
  }));
}

interface BodySample {
  body: BodyPart;
  tags: string[];
}

function bodyArbitrary(op: Operation, ctx: Context): fc.Arbitrary<BodySample> {
  const contentType = fc.constantFrom(...JSON_CONTENT_TYPES);
  if (!op.body) {
    return fc.oneof(
      { withCrossShrink: true },
      { arbitrary: fc.constant<BodySample>({ body: { kind: 'none' }, tags: [] }), weight: 20 },
      {
        arbitrary: fc.constant<BodySample>({
          body: {
            kind: 'json',
            value: { unexpected: '\u0000' },
            contentType: 'application/json',
          },
          tags: ['body:unexpected'],
        }),
        weight: 1,
      },
    );
  }
  const object = fc.tuple(objectSample(op.body, ctx, ''), contentType).map(([x, type]): BodySample => ({
    body: { kind: 'json', value: x.value, contentType: type },
    tags: x.tags,
  }));
  const nonObject = fc.constantFrom(...NON_OBJECT_BODIES).map(([category, value]): BodySample => ({
    body: { kind: 'json', value, contentType: 'application/json' },
    tags: [`body:not-object(${category})`],
  }));
  const nonJson = fc.constantFrom(...NON_JSON_BODIES).map(([category, text]): BodySample => ({
    body: { kind: 'text', text, contentType: 'application/json' },
    tags: [`body:not-json(${category})`],
  }));
  const otherType = fc
    .tuple(objectSample(op.body, ctx, ''), fc.constantFrom(...OTHER_CONTENT_TYPES))
    .map(([x, type]): BodySample => ({
      body: { kind: 'json', value: x.value, contentType: type },
      tags: [...x.tags, `body:content-type(${type ?? 'none'})`],
    }));
  const oversize = objectSample(op.body, ctx, '').map((x): BodySample => ({
    body: {
      kind: 'json',
      value: { ...(x.value as object), padding: 'p'.repeat(BODY_LIMIT_PADDING) },
      contentType: 'application/json',
    },
    tags: [...x.tags, 'body:over-64KiB'],
  }));
  const none = fc.constant<BodySample>({ body: { kind: 'none' }, tags: ['body:absent'] });
  return fc.oneof(
    { withCrossShrink: true },
    { arbitrary: object, weight: 40 },
    { arbitrary: nonObject, weight: 2 },
    { arbitrary: nonJson, weight: 2 },
    { arbitrary: otherType, weight: 2 },
    { arbitrary: oversize, weight: 1 },
    { arbitrary: none, weight: 1 },
  );
}

const credentialArbitrary: fc.Arbitrary<Credential> = fc.oneof(
  { withCrossShrink: true },
  { arbitrary: fc.constant('valid' as const), weight: 40 },
  { arbitrary: fc.constant('other' as const), weight: 3 },
  {
    arbitrary: fc.constantFrom('none', 'wrong', 'malformed', 'nul', 'twice'),
    weight: 5,
  },
);

/** Requests for one operation: path, query, body and credential, mixing valid and hostile input. */
export function requestArbitrary(
  document: OpenApiDocument,
  operation: Operation,
  options: FuzzOptions = {},
): fc.Arbitrary<FuzzRequest> {
  const ctx = (location: InputLocation): Context => ({
    document,
    operationId: operation.operationId,
    location,
    options,
  });
  return fc
    .record({
      path: pathArbitrary(operation, ctx('path')),
      query: queryArbitrary(operation, ctx('query')),
      body: bodyArbitrary(operation, ctx('body')),
      // Open operations get keys too: a key they ignore, or a header Node cannot parse.
      credential: credentialArbitrary,
    })
    .map(({ path, query, body, credential }) => {
      const request: FuzzRequest = {
        operation,
        path: path.value as string,
        query: query.value as string,
        credential,
        body: body.body,
        tags: [
          ...path.tags,
          ...query.tags,
          ...body.tags,
          ...(credential !== 'valid' ? [`header.x-api-key:${credential}`] : []),
        ],
      };
      return Object.assign(request, { [fc.toStringMethod]: () => describeRequest(request) });
    });
}

/** The request body as sent, or undefined. */
export function bodyText(body: BodyPart): string | undefined {
  if (body.kind === 'none') return undefined;
  return body.kind === 'text' ? body.text : JSON.stringify(body.value);
}

/** Shortens long runs (`aaaa…` → `«a×10000»`) and long texts, for failure messages. */
export function excerpt(text: string, max = 300): string {
  const squeezed = text.replace(
    /(.{1,80}?)\1{9,}/gsu,
    (run, unit: string) => `«${unit}×${run.length / unit.length}»`,
  );
  return squeezed.length > max ? `${squeezed.slice(0, max)}…(+${squeezed.length - max} chars)` : squeezed;
}

/** Control characters and lone surrogates written as `\uXXXX`, so that a message shows them. */
export function escapeInvisible(text: string): string {
  return text.replace(/\p{Cc}|\p{Cs}/gu, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** One line naming a request: method, target, credential, hostile tags, body excerpt. */
export function describeRequest(r: FuzzRequest): string {
  const target = `${r.path}${r.query ? `?${r.query}` : ''}`;
  const body = bodyText(r.body);
  return [
    `${r.operation.method} ${excerpt(target, 200)}`,
    r.credential !== 'valid' ? `key=${r.credential}` : '',
    body === undefined ? '' : `body=${excerpt(escapeInvisible(body), 200)}`,
    r.tags.length ? `[${r.tags.join(', ')}]` : '[all valid]',
  ]
    .filter(Boolean)
    .join(' ');
}
