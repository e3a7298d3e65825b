/**
 * The path and query of a generated request, percent-encoded as they go on the wire. Everything in
 * a URL is text, so a value is valid (pooled) or hostile as text: the hostile strings, malformed
 * percent-escapes and numeric texts (`1e308`, `-0`, Arabic-Indic digits), `%00` after a valid path
 * segment. Query parameters may also be missing, repeated, written without `=` or with a bracketed
 * name, and unknown parameters may be added. A lone surrogate is sent as its (invalid) WTF-8 bytes,
 * which no URL API would write.
 */
import fc from 'fast-check';
import { HOSTILE_NUMERIC_TEXT, LONG, MALFORMED_ESCAPES } from './hostile-values.ts';
import { hostileStringOptions } from './hostile-samples.ts';
import { resolveSchema, typeOf, type JsonSchema, type Operation } from './openapi-operations.ts';
import { Encoded, fromCatalog, tagged, untagged, type Context, type Sample } from './tagged-samples.ts';
import { validValue } from './valid-values.ts';

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

/** The query string (without `?`) for the operation's query parameters, now and then an unknown one. */
export function queryArbitrary(op: Operation, ctx: Context): fc.Arbitrary<Sample> {
  const params = op.parameters.filter((p) => p.in === 'query');
  const entries = params.map((p) => queryEntry(p, ctx));
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

/** One parameter's `name=value` pairs: once, absent, repeated, or with an odd name. */
function queryEntry(p: Operation['parameters'][number], ctx: Context) {
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
}

/** The path with each `{parameter}` replaced by a valid or hostile value, percent-encoded. */
export function pathArbitrary(op: Operation, ctx: Context): fc.Arbitrary<Sample> {
  const params = op.parameters.filter((p) => p.in === 'path');
  return fc.tuple(...params.map((p) => wireSample(p.schema, ctx, p.name))).map((samples) => ({
    value: params.reduce((path, p, i) => path.replace(`{${p.name}}`, wireText(samples[i]!.value)), op.path),
    tags: samples.flatMap((x) => x.tags),
  }));
}
