/** GET /openapi.json: the document generated from every declared route, itself included. */
import { createRequire } from 'node:module';
import { z } from 'zod';
import { buildOpenApiDocument } from '../openapi.ts';
import { defineRoute, JsonBytes, precompressed, type Route } from '../route.ts';

const { version } = createRequire(import.meta.url)('../../package.json') as { version: string };

const OpenApiDocument = z
  .object({ openapi: z.literal('3.0.3') })
  .loose()
  .meta({ id: 'OpenApiDocument' });

/** The contract routes; `allRoutes` is read once, on the first request, to build the document. */
export function contractRoutes(allRoutes: () => readonly Route[]): Route[] {
  let document: JsonBytes | undefined;
  return [
    defineRoute({
      method: 'GET',
      path: '/openapi.json',
      rootAlias: '/openapi.json',
      operationId: 'getOpenApiDocument',
      summary: 'This OpenAPI 3.0.3 document',
      description: 'Unauthenticated. Also served at `/openapi.json` on the host root.',
      tag: 'Contract and health',
      auth: false,
      responses: { 200: { description: 'The OpenAPI 3.0.3 document.', schema: OpenApiDocument } },
      handler() {
        // Built, written and compressed once: it is the same for every request.
        document ??= precompressed(
          new JsonBytes(Buffer.from(JSON.stringify(buildOpenApiDocument(allRoutes(), version)))),
        );
        return Promise.resolve({ status: 200, body: document });
      },
    }),
  ];
}
