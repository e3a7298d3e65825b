/**
 * One request of the fuzz, as `request-arbitraries.ts` generates it and the fuzz test sends it, and
 * how it reads in a failure message: one line with the method, the target, the credential, the body
 * and the hostile choices behind it. Long runs are squeezed and invisible characters escaped, so a
 * 10,000-character string or a U+0000 stays readable.
 */
import type { Operation } from './openapi-operations.ts';

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
  /** A header HTTP does not allow (a control character in its value), sent besides the others. */
  header?: readonly [string, string];
  body: BodyPart;
  /** The hostile choices that made it (empty for an all-valid request). */
  tags: string[];
}

/**
 * JSON text to put in a body exactly as written: a value nested thousands deep, which
 * JSON.stringify (recursive) cannot write and fast-check cannot print. A small object either way.
 */
export class RawJson {
  readonly text: string;
  constructor(text: string) {
    this.text = text;
  }
  toString(): string {
    return `RawJson(${this.text.length} chars)`;
  }
}

/** Marks where a RawJson goes in JSON.stringify's output, which then splices its text in. */
const RAW_MARK = '\u0001raw-json:';

/** The request body as sent, or undefined. */
export function bodyText(body: BodyPart): string | undefined {
  if (body.kind === 'none') return undefined;
  if (body.kind === 'text') return body.text;
  const raws: RawJson[] = [];
  const json = JSON.stringify(body.value, (_key, value: unknown) =>
    value instanceof RawJson ? `${RAW_MARK}${raws.push(value) - 1}` : value,
  );
  return raws.length === 0
    ? json
    : json.replace(/"\\u0001raw-json:(\d+)"/g, (_mark, i: string) => raws[Number(i)]!.text);
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
    r.header ? `header=${r.header[0]}: ${escapeInvisible(r.header[1])}` : '',
    body === undefined ? '' : `body=${excerpt(escapeInvisible(body), 200)}`,
    r.tags.length ? `[${r.tags.join(', ')}]` : '[all valid]',
  ]
    .filter(Boolean)
    .join(' ');
}
