/**
 * The catalogues of hostile input the fuzz draws from, each entry tagged with its category
 * (`nul-inside`, `date-impossible`, `escape-overlong-nul`…) so that a failure names the input shape
 * behind it. They are data, not generators: `hostile-samples.ts`, `url-arbitraries.ts` and
 * `body-arbitraries.ts` turn them into fast-check arbitraries. What they hold is what CONTRACT.md
 * and the document promise to refuse (U+0000, lone surrogates, years outside 1900..9999, bodies over
 * 64 KiB…) and what commonly breaks parsers and databases (control characters, 10,000-character
 * strings, numbers beyond 2^53, prototype-pollution keys, malformed percent-escapes).
 */
import type { JsonSchema } from './openapi-operations.ts';
import { RawJson } from './request.ts';

/** A catalogue: `[category, value]` pairs; the category becomes the tag of a value drawn from it. */
export type Catalogue<T = string> = readonly (readonly [string, T])[];

/** JSON written verbatim (`-0`, `1e400`): Node 24's `JSON.rawJSON`, missing from TypeScript's lib. */
const rawJson = (text: string): unknown => (JSON as unknown as { rawJSON(t: string): unknown }).rawJSON(text);

/** The length of a long string (ids, keys, names and path segments alike). */
export const LONG = 10_000;
/** A family emoji: one grapheme of seven code points (four people, three zero-width joiners). */
const FAMILY = '\u{1F469}\u200D\u{1F469}\u200D\u{1F467}\u200D\u{1F466}';

/** Hostile strings for any string field, by category; lengths are for ids, keys and names alike. */
export const HOSTILE_STRINGS: Catalogue = [
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
export const HOSTILE_DATES: Catalogue = [
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
export const HOSTILE_DATE_TIMES: Catalogue = [
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

/** Hostile uuids: nil and max (valid shapes no record has), and other shapes. */
export const HOSTILE_UUIDS: Catalogue = [
  ['uuid-nil', '00000000-0000-0000-0000-000000000000'],
  ['uuid-max', 'ffffffff-ffff-ffff-ffff-ffffffffffff'],
  ['uuid-shape', '0000000000000000000000000000000'],
  ['uuid-shape', 'zzzzzzzz-zzzz-zzzz-zzzz-zzzzzzzzzzzz'],
  ['uuid-shape', '{6f1c2a9e-1b7d-4c3e-9a8f-2d4b6c8e0f1a}'],
  ['uuid-shape', 'urn:uuid:6f1c2a9e-1b7d-4c3e-9a8f-2d4b6c8e0f1a'],
  ['uuid-shape', '6f1c2a9e1b7d4c3e9a8f2d4b6c8e0f1a'],
];

/** Hostile email addresses: malformed, non-ASCII, too long. */
export const HOSTILE_EMAILS: Catalogue = [
  ['email-shape', 'a@b'],
  ['email-shape', '@example.com'],
  ['email-shape', 'a@@example.com'],
  ['email-shape', 'a b@example.com'],
  ['email-unicode', '\u00fcn\u00ef@c\u00f6d\u00e9.com'],
  ['email-long', `${'x'.repeat(300)}@example.com`],
];

/** Hostile URLs: no host, other schemes, spaces and control characters, bad escapes and ports. */
export const HOSTILE_URIS: Catalogue = [
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
export function hostileNumbers(schema: JsonSchema): [string, unknown][] {
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
export const HOSTILE_NUMERIC_TEXT: Catalogue = [
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
export const MALFORMED_ESCAPES: Catalogue = [
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
export const EXTRA_FIELDS: Catalogue<unknown> = [
  ['unknown_field', 'x'],
  ['id', '6f1c2a9e-1b7d-4c3e-9a8f-2d4b6c8e0f1a'],
  ['status', 'BOOKED'],
  ['price_rupees', 0],
  ['__proto__', { polluted: true }],
  ['constructor', { prototype: { polluted: true } }],
  // Depth and size: ignored at any depth (CONTRACT.md, "Ignored members"), and no 500 from either.
  ['partner_id', new RawJson('['.repeat(6000) + ']'.repeat(6000))],
  ['partner_id', new RawJson('{"a":'.repeat(2000) + 'null' + '}'.repeat(2000))],
  ['deeply_nested', new RawJson('[{"a":'.repeat(2500) + '0' + '}]'.repeat(2500))],
  ['large_member', 'x'.repeat(50 * 1024)],
];

/** Bodies that are JSON but not an object. */
export const NON_OBJECT_BODIES: Catalogue<unknown> = [
  ['array', []],
  ['array-of-object', [{}]],
  ['string', 'body'],
  ['number', 42],
  ['null', null],
  ['boolean', true],
];

/** Bodies sent as `application/json` that are not JSON. */
export const NON_JSON_BODIES: Catalogue = [
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
export const OTHER_CONTENT_TYPES: readonly (string | undefined)[] = [
  undefined,
  'text/plain',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=x',
  'application/merge-patch+json',
  'application/json-seq',
];

/** Valid spellings of the JSON content type. */
export const JSON_CONTENT_TYPES = ['application/json', 'application/json; charset=utf-8', 'Application/JSON'];

/** Padding that takes a valid body over the 64 KiB body limit. */
export const BODY_LIMIT_PADDING = 70 * 1024;
