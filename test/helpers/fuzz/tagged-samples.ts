/**
 * What every generator of the fuzz returns and takes. A sample is a value plus the hostile choices
 * inside it (`body.slot_start:date-impossible`), so that a failure names the input shape behind it;
 * a context says which operation and which part of the request a field belongs to, and carries the
 * caller's options (its pool of real values, the odds of valid against hostile).
 */
import fc from 'fast-check';
import type { Catalogue } from './hostile-values.ts';
import type { JsonSchema, OpenApiDocument } from './openapi-operations.ts';

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

/** Where a field is generated: the document, the operation, the part of the request, the options. */
export interface Context {
  document: OpenApiDocument;
  operationId: string;
  location: InputLocation;
  options: FuzzOptions;
}

/** A generated value and the hostile choices inside it. */
export interface Sample {
  value: unknown;
  tags: string[];
}

/** Text already percent-encoded for a URL, written as is (malformed escapes, `%00`). */
export class Encoded {
  readonly text: string;
  constructor(text: string) {
    this.text = text;
  }
}

/** The value of an object property left out of the object. */
export const ABSENT = Symbol('absent');

/** A sample of `value` with these hostile choices. */
export const tagged = (value: unknown, ...tags: string[]): Sample => ({ value, tags });
/** A sample of a valid `value`. */
export const untagged = (value: unknown): Sample => ({ value, tags: [] });

/** A value from `catalog`, tagged `label:category`. */
export function fromCatalog(label: string, catalog: Catalogue<unknown>): fc.Arbitrary<Sample> {
  return fc.constantFrom(...catalog).map(([category, value]) => tagged(value, `${label}:${category}`));
}
