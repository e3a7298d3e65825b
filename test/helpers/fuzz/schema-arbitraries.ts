/**
 * JSON values generated from a schema of an OpenAPI 3.0 document, field by field: each field gets
 * either a value valid for its schema (`valid-values.ts`, drawn partly from the caller's pool of
 * real values, so that requests reach the use cases and the database) or a hostile one
 * (`hostile-samples.ts`). On top: missing required fields, unknown extra fields (prototype-pollution
 * keys among them), arrays with too few, too many or 1,000 items, and objects or arrays of the
 * wrong type. Every hostile choice is tagged (`body.slot_start:date-impossible`), and every choice
 * lists its valid alternative first (with cross-shrinking), so fast-check shrinks a counterexample
 * down to the hostile fields that matter.
 */
import fc from 'fast-check';
import { EXTRA_FIELDS, HOSTILE_STRINGS } from './hostile-values.ts';
import { hostileValue, wrongTypes } from './hostile-samples.ts';
import { resolveSchema, typeOf, type JsonSchema } from './openapi-operations.ts';
import { ABSENT, fromCatalog, tagged, untagged, type Context, type Sample } from './tagged-samples.ts';
import { validValue } from './valid-values.ts';

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

/**
 * An object for `s` (the whole body when `path` is empty): each property present or absent, now
 * and then an unknown field or two; a nested object is now and then of the wrong type.
 */
export function objectSample(s: JsonSchema, ctx: Context, path: string): fc.Arbitrary<Sample> {
  const properties = Object.entries((s.properties ?? {}) as Record<string, JsonSchema>);
  const required = new Set((s.required ?? []) as string[]);
  const prefix = path ? `${path}.` : '';
  const label = `${ctx.location}${path ? `.${path}` : ''}`;
  const fields = properties.map(([name, p]) =>
    propertySample(p, ctx, `${prefix}${name}`, required.has(name), `${label}.${name}`),
  );
  const object = fc.tuple(fc.tuple(...fields), extraFields()).map(([values, extra]) => {
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

/** A property's value or ABSENT: a required one is rarely missing (tagged), an optional one often. */
function propertySample(
  schema: JsonSchema,
  ctx: Context,
  path: string,
  required: boolean,
  label: string,
): fc.Arbitrary<Sample> {
  const value = fieldSample(schema, ctx, path);
  const absent = fc.constant(tagged(ABSENT, ...(required ? [`${label}:missing`] : [])));
  return required
    ? fc.oneof({ withCrossShrink: true }, { arbitrary: value, weight: 40 }, { arbitrary: absent, weight: 1 })
    : fc.oneof({ withCrossShrink: true }, { arbitrary: absent, weight: 1 }, { arbitrary: value, weight: 2 });
}

/** Mostly no unknown fields, now and then one or two of EXTRA_FIELDS. */
function extraFields(): fc.Arbitrary<(readonly [string, unknown])[]> {
  return fc.oneof(
    { withCrossShrink: true },
    { arbitrary: fc.constant([] as (readonly [string, unknown])[]), weight: 10 },
    { arbitrary: fc.subarray([...EXTRA_FIELDS], { minLength: 1, maxLength: 2 }), weight: 1 },
  );
}

/** An array for `s`: items sampled field by field, or too few, too many, 1,000, or not an array. */
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
