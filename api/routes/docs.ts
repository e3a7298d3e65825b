/**
 * GET /docs: the API reference page of /openapi.json (Swagger UI), and the assets it loads, all
 * served by the service from the `swagger-ui-dist` package, so the page renders on a machine with
 * no internet access and sends nothing elsewhere (no CDN, no fonts, no online validator).
 * Served at `/api/v1/docs` and at `/docs` on the host root; the page loads its assets and the
 * document from the folder it was opened in, with or without a trailing slash.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { z } from 'zod';
import { defineRoute, precompressed, TypedBytes } from '../route.ts';

const dist = path.dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));

/** The assets the page loads, by the name it asks for, with their media types. */
const ASSETS = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'text/javascript; charset=utf-8',
  'favicon-32x32.png': 'image/png',
} as const;
type AssetName = keyof typeof ASSETS;

const PAGE = `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8">
    <meta name="viewport" content="width=device-width, initial-scale=1">
    <title>Partner booking API reference</title>
    <script>
      // The assets and the document lie beside the page: in the folder of /docs or /api/v1/docs,
      // also when it is opened with a trailing slash (the router takes one), which would put
      // relative URLs under /docs/. Added from here, so no request is made under the wrong folder.
      const dir = location.pathname.replace(/[/]+$/, '').replace(/[^/]*$/, '');
      for (const [rel, href] of [['icon', 'docs-assets/favicon-32x32.png'], ['stylesheet', 'docs-assets/swagger-ui.css']]) {
        const link = document.createElement('link');
        link.rel = rel;
        link.href = dir + href;
        document.head.append(link);
      }
    </script>
  </head>
  <body>
    <div id="reference"></div>
    <script>
      const bundle = document.createElement('script');
      bundle.src = dir + 'docs-assets/swagger-ui-bundle.js';
      bundle.onload = () => {
        window.ui = SwaggerUIBundle({
          url: new URL(dir + 'openapi.json', location.href).href,
          dom_id: '#reference',
          deepLinking: true,
          docExpansion: 'list',
          defaultModelsExpandDepth: 0,
          validatorUrl: null, // the online validator would send the document elsewhere
          tryItOutEnabled: false,
        });
      };
      document.body.append(bundle);
    </script>
  </body>
</html>
`;

/** An asset as its response body, read (and, but for the icon, compressed) on first use. */
const cache = new Map<AssetName, TypedBytes>();
function asset(name: AssetName): TypedBytes {
  let body = cache.get(name);
  if (!body) {
    body = new TypedBytes(ASSETS[name], readFileSync(path.join(dist, name)));
    if (!ASSETS[name].startsWith('image/')) precompressed(body);
    cache.set(name, body);
  }
  return body;
}

const page = precompressed(new TypedBytes('text/html; charset=utf-8', Buffer.from(PAGE)));

const tag = 'Contract and health';

export const docsRoutes = [
  defineRoute({
    method: 'GET',
    path: '/docs',
    rootAlias: '/docs',
    operationId: 'getApiReference',
    summary: 'This API reference, as a page',
    description:
      'Unauthenticated. An HTML reference of `/openapi.json` for a browser; everything it loads is served here ' +
      '(`docs-assets/…`), so it works offline. Also served at `/docs` on the host root.',
    tag,
    auth: false,
    responses: {
      200: { description: 'The page.', schema: z.string(), mediaTypes: ['text/html'] },
    },
    handler() {
      return Promise.resolve({
        status: 200,
        body: page,
        headers: { 'Cache-Control': 'no-cache' },
      });
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/docs-assets/{asset}',
    rootAlias: '/docs-assets/:asset',
    operationId: 'getApiReferenceAsset',
    summary: 'A file the reference page loads',
    description:
      'Unauthenticated. The stylesheet, script and icon of `/docs` (Swagger UI, served from this service).',
    tag,
    auth: false,
    params: z.object({ asset: z.enum(Object.keys(ASSETS) as [AssetName, ...AssetName[]]) }),
    responses: {
      200: {
        description: 'The file.',
        schema: z.string(),
        mediaTypes: ['text/css', 'text/javascript', 'image/png'],
      },
    },
    handler({ params }) {
      return Promise.resolve({
        status: 200,
        body: asset(params.asset),
        headers: { 'Cache-Control': 'public, max-age=86400' },
      });
    },
  }),
];
