/**
 * GET /docs in a real headless Chromium (Debian's `chromium`, driven by puppeteer-core): the page
 * renders every operation of /openapi.json, at both addresses, and no request leaves the machine
 * (every request the page makes goes to the service). `.ci/run` installs Chromium and sets
 * REQUIRE_BROWSER_TEST=1; elsewhere, without a Chromium, the test is skipped and says so.
 */
import test from 'ava';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { connect } from 'node:net';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import puppeteer from 'puppeteer-core';
import { useTestDatabase } from '../helpers/database.ts';
import { call, rawCall, useTestServer } from '../helpers/http.ts';
import { waitFor } from '../helpers/wait.ts';
import { precompressed, TypedBytes } from '../../api/route.ts';

const database = useTestDatabase(test);
const server = useTestServer(test, database);

const chromium = [process.env.CHROMIUM_PATH, '/usr/bin/chromium', '/usr/bin/chromium-browser'].find(
  (candidate) => candidate && existsSync(candidate),
);
const required = process.env.REQUIRE_BROWSER_TEST === '1';

if (!chromium && !required) {
  test('the reference page in a browser (skipped: no Chromium; apt-get install chromium, or set CHROMIUM_PATH)', (t) => {
    t.log('skipped: no Chromium found');
    t.pass();
  });
} else {
  test('the reference page lists every operation, at both addresses, and loads nothing from elsewhere', async (t) => {
    t.truthy(
      chromium,
      'REQUIRE_BROWSER_TEST=1 but no Chromium: apt-get install chromium, or set CHROMIUM_PATH',
    );
    const origin = new URL(server().url).origin;
    const document = (await call(server(), 'GET', '/api/v1/openapi.json')).body as {
      paths: Record<string, Record<string, { operationId: string; tags: string[] }>>;
    };
    const operations = Object.values(document.paths).flatMap((methods) => Object.values(methods));
    t.true(operations.length > 20);

    const browser = await puppeteer.launch({
      executablePath: chromium!,
      args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--no-first-run'],
    });
    t.teardown(() => browser.close());
    // With a trailing slash too: the page's relative URLs resolved under it, and it stayed blank.
    for (const at of ['/docs', '/api/v1/docs', '/docs/', '/api/v1/docs/']) {
      const page = await browser.newPage();
      const elsewhere: string[] = [];
      const failed: string[] = [];
      page.on('request', (request) => {
        const url = request.url();
        if (!url.startsWith(`${origin}/`) && !url.startsWith('data:')) elsewhere.push(url);
      });
      page.on('requestfailed', (request) => failed.push(request.url()));
      const response = await page.goto(`${origin}${at}`, { waitUntil: 'networkidle0' });
      t.is(response?.status(), 200, at);
      t.regex(response?.headers()['content-type'] ?? '', /^text\/html/);
      await page.waitForSelector('.opblock', { timeout: 20_000 });
      const shown = await page.$$eval('.opblock', (blocks) => blocks.map((b) => b.id));
      for (const op of operations) {
        t.true(
          shown.some((id) => id.endsWith(`-${op.operationId}`)),
          `${at}: ${op.operationId} is listed`,
        );
      }
      t.deepEqual(elsewhere, [], `${at}: no request leaves the machine`);
      t.deepEqual(failed, [], `${at}: every request the page made was answered`);
      await page.close();
    }
  });
}

test('the page and its assets are served with their types; an unknown asset is a documented 400', async (t) => {
  const page = await fetch(`${server().url}/docs`);
  t.is(page.status, 200);
  t.regex(page.headers.get('content-type') ?? '', /^text\/html; charset=utf-8/);
  t.regex(await page.text(), /docs-assets\/swagger-ui-bundle\.js/);
  const css = await call(server(), 'GET', '/api/v1/docs-assets/swagger-ui.css');
  t.is(css.status, 200);
  const script = await call(server(), 'GET', '/docs-assets/swagger-ui-bundle.js');
  t.is(script.status, 200);
  t.true(script.text.length > 100_000);
  const unknown = await call(server(), 'GET', '/api/v1/docs-assets/..%2Fpackage.json');
  t.is(unknown.status, 400);
  t.is(unknown.body.error, 'VALIDATION_ERROR');
});

test('the document, the page and its script and stylesheet go compressed to a client that accepts it', async (t) => {
  const targets = [
    '/api/v1/openapi.json',
    '/openapi.json',
    '/docs',
    '/docs-assets/swagger-ui-bundle.js',
    '/docs-assets/swagger-ui.css',
  ];
  for (const target of targets) {
    const plain = await rawCall(server(), { method: 'GET', target });
    t.is(plain.status, 200, target);
    t.is(plain.headers.get('content-encoding'), null, `${target}: as is, unasked`);
    t.is(plain.headers.get('vary'), 'Accept-Encoding', target);
    // Compressed in the background on first use, served as is until then.
    await waitFor(async () => (await rawBytes(target, 'br')).headers.get('content-encoding') === 'br', {
      timeout: 60_000,
    });
    for (const [accept, encoding, decode] of [
      ['gzip, deflate, br', 'br', brotliDecompressSync],
      ['gzip', 'gzip', gunzipSync],
      ['br;q=0.5, gzip;q=1', 'gzip', gunzipSync],
    ] as const) {
      const packed = await rawBytes(target, accept);
      t.is(packed.headers.get('content-encoding'), encoding, `${target} for ${accept}`);
      t.true(packed.body.length < plain.text.length, `${target}: smaller`);
      t.is(decode(packed.body).toString('utf8'), plain.text, `${target}: the same bytes once decoded`);
    }
    // A coding refused (q=0) or given a q that is none (negative, over 1, not a number) is not sent.
    for (const accept of [
      'identity',
      'br;q=0, gzip;q=0',
      'br;q=abc, gzip;q=-1',
      'br;q=0, *;q=2',
      'gzip;q=1.5',
    ]) {
      t.is((await rawBytes(target, accept)).headers.get('content-encoding'), null, `${target} for ${accept}`);
    }
  }
  // The icon is compressed already.
  t.is((await rawBytes('/docs-assets/favicon-32x32.png', 'br')).headers.get('content-encoding'), null);
});

test('a large body is compressed in the background: returned at once, served as is until ready', async (t) => {
  const text = Array.from({ length: 200_000 }, (_, i) => `line ${i} of a large script\n`).join('');
  const body = precompressed(new TypedBytes('text/javascript; charset=utf-8', Buffer.from(text)));
  t.is(body.compressed, undefined, 'nothing compressed on the event loop');
  await waitFor(() => body.compressed !== undefined, { timeout: 60_000 });
  t.is(brotliDecompressSync(body.compressed!.br).toString('utf8'), text);
  t.is(gunzipSync(body.compressed!.gzip).toString('utf8'), text);
});

/** GET `target` with `Accept-Encoding: accept`, the body as the bytes that came. */
async function rawBytes(target: string, accept: string) {
  const { hostname, port } = new URL(server().url);
  const socket = connect(Number(port), hostname);
  const chunks: Buffer[] = [];
  socket.on('data', (chunk: Buffer) => chunks.push(chunk));
  socket.write(
    `GET ${target} HTTP/1.1\r\nHost: x\r\nAccept-Encoding: ${accept}\r\nConnection: close\r\n\r\n`,
  );
  await once(socket, 'close');
  const raw = Buffer.concat(chunks);
  const end = raw.indexOf('\r\n\r\n');
  const headers = new Headers();
  for (const line of raw.subarray(0, end).toString('latin1').split('\r\n').slice(1)) {
    const colon = line.indexOf(':');
    headers.append(line.slice(0, colon).trim(), line.slice(colon + 1).trim());
  }
  return { headers, body: raw.subarray(end + 4, end + 4 + Number(headers.get('content-length'))) };
}
