/**
 * The body of a generated request. Mostly a JSON object from the operation's body schema (valid or
 * hostile field by field, `schema-arbitraries.ts`) under one of the spellings of the JSON content
 * type; otherwise JSON that is not an object, text that is not JSON, the object under another
 * content type or none, the object padded over the 64 KiB limit, or no body at all. An operation
 * without a body now and then gets one anyway.
 */
import fc from 'fast-check';
import type { BodyPart } from './request.ts';
import {
  BODY_LIMIT_PADDING,
  JSON_CONTENT_TYPES,
  NON_JSON_BODIES,
  NON_OBJECT_BODIES,
  OTHER_CONTENT_TYPES,
} from './hostile-values.ts';
import type { JsonSchema, Operation } from './openapi-operations.ts';
import { objectSample } from './schema-arbitraries.ts';
import type { Context } from './tagged-samples.ts';

/** A generated body and the hostile choices behind it. */
export interface BodySample {
  body: BodyPart;
  tags: string[];
}

/** The body for `op`: see the module comment for the mix. */
export function bodyArbitrary(op: Operation, ctx: Context): fc.Arbitrary<BodySample> {
  if (!op.body) return unexpectedBody();
  const contentType = fc.constantFrom(...JSON_CONTENT_TYPES);
  const object = fc.tuple(objectSample(op.body, ctx, ''), contentType).map(([x, type]): BodySample => ({
    body: { kind: 'json', value: x.value, contentType: type },
    tags: x.tags,
  }));
  const none = fc.constant<BodySample>({ body: { kind: 'none' }, tags: ['body:absent'] });
  return fc.oneof(
    { withCrossShrink: true },
    { arbitrary: object, weight: 40 },
    { arbitrary: nonObjectBody(), weight: 2 },
    { arbitrary: nonJsonBody(), weight: 2 },
    { arbitrary: otherTypeBody(op.body, ctx), weight: 2 },
    { arbitrary: oversizeBody(op.body, ctx), weight: 1 },
    { arbitrary: none, weight: 1 },
  );
}

/** For an operation without a body: mostly none, now and then a JSON object with U+0000. */
function unexpectedBody(): fc.Arbitrary<BodySample> {
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

function nonObjectBody(): fc.Arbitrary<BodySample> {
  return fc.constantFrom(...NON_OBJECT_BODIES).map(([category, value]): BodySample => ({
    body: { kind: 'json', value, contentType: 'application/json' },
    tags: [`body:not-object(${category})`],
  }));
}

function nonJsonBody(): fc.Arbitrary<BodySample> {
  return fc.constantFrom(...NON_JSON_BODIES).map(([category, text]): BodySample => ({
    body: { kind: 'text', text, contentType: 'application/json' },
    tags: [`body:not-json(${category})`],
  }));
}

function otherTypeBody(schema: JsonSchema, ctx: Context): fc.Arbitrary<BodySample> {
  return fc
    .tuple(objectSample(schema, ctx, ''), fc.constantFrom(...OTHER_CONTENT_TYPES))
    .map(([x, type]): BodySample => ({
      body: { kind: 'json', value: x.value, contentType: type },
      tags: [...x.tags, `body:content-type(${type ?? 'none'})`],
    }));
}

function oversizeBody(schema: JsonSchema, ctx: Context): fc.Arbitrary<BodySample> {
  return objectSample(schema, ctx, '').map((x): BodySample => ({
    body: {
      kind: 'json',
      value: { ...(x.value as object), padding: 'p'.repeat(BODY_LIMIT_PADDING) },
      contentType: 'application/json',
    },
    tags: [...x.tags, 'body:over-64KiB'],
  }));
}
