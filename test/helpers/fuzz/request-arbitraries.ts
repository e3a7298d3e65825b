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
 * valid one twice, or another partner's; and now and then a header with a control character.
 *
 * Every hostile choice is tagged (`body.slot_start:date-impossible`), so a failure names the input
 * shape behind it. Every choice lists its valid alternative first (with cross-shrinking), so
 * fast-check shrinks a counterexample down to the hostile fields that matter. No I/O: the caller
 * sends the requests (only the clock is read, for dates near today).
 *
 * This module assembles a request; its parts come from `url-arbitraries.ts` (path and query),
 * `body-arbitraries.ts` (body), `schema-arbitraries.ts` (JSON values field by field),
 * `valid-values.ts` and `hostile-samples.ts` (one field), over the catalogues of `hostile-values.ts`.
 */
import fc from 'fast-check';
import { bodyArbitrary } from './body-arbitraries.ts';
import { describeRequest, type Credential, type FuzzRequest } from './request.ts';
import type { OpenApiDocument, Operation } from './openapi-operations.ts';
import type { Context, FuzzOptions, InputLocation } from './tagged-samples.ts';
import { pathArbitrary, queryArbitrary } from './url-arbitraries.ts';

const credentialArbitrary: fc.Arbitrary<Credential> = fc.oneof(
  { withCrossShrink: true },
  { arbitrary: fc.constant('valid' as const), weight: 40 },
  { arbitrary: fc.constant('other' as const), weight: 3 },
  {
    arbitrary: fc.constantFrom('none', 'wrong', 'malformed', 'nul', 'twice'),
    weight: 5,
  },
);

/**
 * Now and then a header Node's parser refuses, which the service must judge after the key and the
 * rate limit like any invalid input (CONTRACT.md's hardening answers): a U+0000 or another control
 * character, in a header the operation ignores or in one it reads (the stream's Last-Event-ID).
 */
const unreadableHeaderArbitrary: fc.Arbitrary<readonly [string, string] | undefined> = fc.oneof(
  { withCrossShrink: true },
  { arbitrary: fc.constant(undefined), weight: 14 },
  {
    arbitrary: fc.constantFrom(
      ['x-note', 'a\u0000b'] as const,
      ['user-agent', 'fuzz\u0007'] as const,
      ['last-event-id', '\u0000'] as const,
    ),
    weight: 1,
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
      header: unreadableHeaderArbitrary,
    })
    .map(({ path, query, body, credential, header }) => {
      const request: FuzzRequest = {
        operation,
        path: path.value as string,
        query: query.value as string,
        credential,
        ...(header ? { header } : {}),
        body: body.body,
        tags: [
          ...path.tags,
          ...query.tags,
          ...body.tags,
          ...(credential !== 'valid' ? [`header.x-api-key:${credential}`] : []),
          ...(header ? [`header.${header[0]}:control-character`] : []),
        ],
      };
      return Object.assign(request, { [fc.toStringMethod]: () => describeRequest(request) });
    });
}
