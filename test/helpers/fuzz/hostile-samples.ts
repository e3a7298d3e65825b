/**
 * Hostile values for one field of a schema, as tagged fast-check arbitraries: the catalogues of
 * `hostile-values.ts` chosen by the field's type and format, values of the wrong JSON type, and
 * valid values corrupted (U+0000 or a lone surrogate inserted, white space around, upper case), so
 * that a hostile value is often one character away from one the service accepts.
 */
import fc from 'fast-check';
import {
  HOSTILE_DATES,
  HOSTILE_DATE_TIMES,
  HOSTILE_EMAILS,
  HOSTILE_STRINGS,
  HOSTILE_URIS,
  HOSTILE_UUIDS,
  LONG,
  hostileNumbers,
  type Catalogue,
} from './hostile-values.ts';
import { resolveSchema, typeOf, type JsonSchema, type OpenApiDocument } from './openapi-operations.ts';
import { fromCatalog, tagged, type Context, type Sample } from './tagged-samples.ts';

/** The hostile strings of a format, on top of those for any string. */
const HOSTILE_BY_FORMAT: Record<string, Catalogue> = {
  uuid: HOSTILE_UUIDS,
  date: HOSTILE_DATES,
  'date-time': HOSTILE_DATE_TIMES,
  email: HOSTILE_EMAILS,
  uri: HOSTILE_URIS,
  url: HOSTILE_URIS,
};

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
export function wrongTypes(s: JsonSchema, document: OpenApiDocument): [string, unknown][] {
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
export function hostileValue(
  s: JsonSchema,
  ctx: Context,
  label: string,
  valid: fc.Arbitrary<unknown>,
): fc.Arbitrary<Sample> {
  const type = typeOf(s);
  const options: fc.Arbitrary<Sample>[] = [fromCatalog(label, wrongTypes(s, ctx.document))];
  if (type === 'integer' || type === 'number') options.push(fromCatalog(label, hostileNumbers(s)));
  if (type === 'string') options.push(...hostileStringOptions(s, label, valid));
  return fc.oneof(...options);
}

/**
 * Hostile strings for a string field (or any value a URL carries as text): the catalogue, lengths
 * just outside the schema's bounds, corrupted valid values, random Unicode, the format's own
 * catalogue (twice the odds) and enum values that are not in the enum.
 */
export function hostileStringOptions(
  s: JsonSchema,
  label: string,
  valid: fc.Arbitrary<unknown>,
): fc.Arbitrary<Sample>[] {
  const lengths: [string, string][] = [];
  if (typeof s.maxLength === 'number' && s.maxLength < LONG) {
    lengths.push(['too-long', 'x'.repeat(s.maxLength + 1)]);
  }
  if (typeof s.minLength === 'number' && s.minLength > 1)
    lengths.push(['too-short', 'x'.repeat(s.minLength - 1)]);
  const options = [
    fromCatalog(label, [...HOSTILE_STRINGS, ...lengths]),
    corrupted(label, valid),
    fc.string({ unit: 'binary', maxLength: 24 }).map((v) => tagged(v, `${label}:random-unicode`)),
  ];
  const special = HOSTILE_BY_FORMAT[s.format as string];
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
