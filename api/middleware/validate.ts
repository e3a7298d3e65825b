/**
 * Validation: parses a route's path parameters, query and body with the route's own zod schemas.
 * Every field's problem in the query and body is reported at once as VALIDATION_ERROR details
 * `{field, message, in}`, and the path's when those are sound: the body is checked before the path's
 * id (CONTRACT.md, the order of checks of the `{holdGroupId}` and `{seriesId}` routes; every route
 * keeps that one order). On success the handler gets the parsed (typed, defaulted, stripped) values.
 */
import type { z } from 'zod';
import type { AppContext } from '../context.ts';
import { ValidationError, type FieldProblem, type InputLocation, type InvalidFieldError } from '../errors.ts';
import type { Route } from '../route.ts';

/** The parsed input of a request, or throws ValidationError. */
export function validateInput(
  route: Route,
  ctx: AppContext,
): { params: unknown; query: unknown; body: unknown } {
  const problems: FieldProblem[] = [];
  const query = parsePart(route.query, ctx.query, 'query', problems);
  const body = parsePart(route.body, ctx.state.body, 'body', problems);
  if (problems.length) throw new ValidationError(problems);
  const params = parsePart(route.params, ctx.params, 'path', problems);
  if (problems.length) throw new ValidationError(problems);
  return { params, query, body };
}

function parsePart(
  schema: z.ZodType | undefined,
  value: unknown,
  location: InputLocation,
  problems: FieldProblem[],
): unknown {
  if (!schema) return undefined;
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  // One problem per field, the first zod found: for a value of the wrong type that is the type
  // (zod also runs an array's length checks on a string sent in its place, which says nothing new).
  const named = new Set<string>();
  for (const issue of result.error.issues) {
    const field = issue.path.map(String).join('.');
    if (named.has(field)) continue;
    named.add(field);
    problems.push({ field, message: issue.message, in: location });
  }
  return undefined;
}

/**
 * A use case's InvalidFieldError as the VALIDATION_ERROR the client gets, its field located in the
 * part of the request the route declares it in (body, then query, then path).
 */
export function asValidationError(route: Route, err: InvalidFieldError): ValidationError {
  const parts: [z.ZodType | undefined, InputLocation][] = [
    [route.body, 'body'],
    [route.query, 'query'],
    [route.params, 'path'],
  ];
  const [, location] = parts.find(([schema]) => hasField(schema, err.field)) ?? [undefined, 'body'];
  return new ValidationError([{ field: err.field, message: err.message, in: location }]);
}

function hasField(schema: z.ZodType | undefined, field: string): boolean {
  const shape = (schema as { shape?: Record<string, unknown> } | undefined)?.shape;
  return shape !== undefined && Object.hasOwn(shape, field.split('.')[0]!);
}
