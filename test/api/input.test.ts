/**
 * What the API accepts, field by field, per CONTRACT.md "Hardening answers": free text kept exactly
 * as sent but for trimming (emoji, joiners, combining marks, bidi and other controls included),
 * U+0000 and lone surrogates refused, null only where nullable, no numbers as strings, dates that
 * exist in years 1900 to 9999, URLs that are real absolute URIs, digits-only query integers; and
 * what arrives before any route: raw HTTP the parser refuses, duplicated keys, unknown paths.
 */
import test from 'ava';
import { randomUUID } from 'node:crypto';
import { connect } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  confirm,
  gridSlots,
  hold,
  holdSlot,
  localDate,
  makeBookingWorld,
  type BookingWorld,
} from '../helpers/booking.ts';
import { useTestDatabase } from '../helpers/database.ts';
import { makePackage, makePartner } from '../helpers/factories.ts';
import { call, useTestServer } from '../helpers/http.ts';
import { assertDocumented } from '../helpers/openapi.ts';
import { join } from '../helpers/waitlist.ts';

const database = useTestDatabase(test);
const server = useTestServer(test, database);

let world: BookingWorld;
test.before(async () => {
  world = await makeBookingWorld((await database.ready()).db);
});

const fields = (body: { details?: { field: string; in: string }[] }) =>
  (body.details ?? []).map((d) => `${d.in}:${d.field}`);

test('free text is kept exactly as sent, trimmed at either end, in every language and script', async (t) => {
  const { db } = database();
  const name = 'Zoë 👩🏽‍💻 Ω\u0301 \u202eRTL\u202c \u200dJ\u0007';
  const reference = 'upi:₹/\u0001\u001f\u007f\u2028ref';
  const res = await confirm(server(), world.apiKey, {
    hold_id: (await holdSlot(server(), world, { index: 0 })).holdId,
    customer_name: `  ${name}\n\t`,
    payment_reference: ` ${reference} `,
  });
  t.is(res.status, 201, res.text);
  const detail = await call(server(), 'GET', `/api/v1/bookings/${res.body.booking_id}`, {
    key: world.apiKey,
  });
  t.is(detail.body.customer_name, name);
  t.is(detail.body.payment_reference, reference);

  const reason = ' rain 🌧️, 雨, مطر ';
  const cancel = await call(server(), 'POST', `/api/v1/bookings/${res.body.booking_id}/cancel`, {
    key: world.apiKey,
    body: { idempotency_key: randomUUID(), reason },
  });
  t.is(cancel.status, 200, cancel.text);
  t.is((await db('bookings').where({ id: res.body.booking_id }).first()).cancel_reason, reason.trim());

  const date = await localDate(db, world.venueId, 1);
  const entry = await join(server(), world.apiKey, {
    venue_id: world.venueId,
    resource_id: world.court,
    slot_date: date,
    customer_name: ' Ærøskøbing ',
  });
  t.is(entry.status, 201, entry.text);
  t.is(entry.body.entry.customer_name, 'Ærøskøbing');
});

test('U+0000 and lone surrogates are refused in every string, naming the field', async (t) => {
  const { holdId } = await holdSlot(server(), world, { index: 1 });
  for (const bad of ['a\u0000b', '\ud800', 'x\udfffy']) {
    const res = await confirm(server(), world.apiKey, {
      hold_id: holdId,
      customer_name: `Asha ${bad}`,
      payment_reference: bad,
      idempotency_key: `key-${bad}`,
    });
    t.is(res.status, 400, JSON.stringify(bad));
    assertDocumented(t, 'POST /bookings/confirm', res);
    t.deepEqual(
      [...new Set(fields(res.body))].sort(),
      ['body:customer_name', 'body:idempotency_key', 'body:payment_reference'],
      res.text,
    );
  }
  const query = await call(server(), 'GET', '/api/v1/bookings?customer_name=%00', { key: world.apiKey });
  t.is(query.status, 400);
  t.deepEqual(fields(query.body), ['query:customer_name']);
  t.true(query.headers.has('x-ratelimit-remaining'), 'validation runs after the rate limit');
  t.is((await database().db('holds').where({ id: holdId }).first()).status, 'ACTIVE');
});

test('a maximum length holds for the text as sent: white space does not trim a reason into range', async (t) => {
  const { holdId } = await holdSlot(server(), world, { index: 4 });
  for (const reason of [' '.repeat(10_000), `${' '.repeat(300)}x${' '.repeat(300)}`]) {
    const res = await call(server(), 'POST', `/api/v1/partner/holds/${holdId}/cancel`, {
      key: world.apiKey,
      body: { idempotency_key: randomUUID(), reason },
    });
    t.is(res.status, 400, `${reason.length} characters`);
    t.deepEqual(fields(res.body), ['body:reason']);
  }
  t.is((await database().db('holds').where({ id: holdId }).first()).status, 'ACTIVE');
});

test('null only where the spec makes a field nullable; numbers never as strings', async (t) => {
  const date = await localDate(database().db, world.venueId, 2);
  const nullName = await join(server(), world.apiKey, {
    venue_id: world.venueId,
    resource_id: world.court,
    slot_date: date,
    customer_phone: '9800000001',
    customer_name: null,
  });
  t.is(nullName.status, 201, 'the waitlist customer_name is nullable');
  const slots = await gridSlots(database().db, world.venueId, world.court);
  for (const [body, field] of [
    [{ customer_phone: null }, 'customer_phone'],
    [{ slot_duration_minutes: '60' }, 'slot_duration_minutes'],
    [{ slot_duration_minutes: null }, 'slot_duration_minutes'],
    [{ idempotency_key: null }, 'idempotency_key'],
    [{ venue_id: 12 }, 'venue_id'],
  ] as const) {
    const res = await hold(server(), world.apiKey, {
      venue_id: world.venueId,
      resource_id: world.court,
      slot_start: slots[2]!.slot_start,
      ...body,
    } as Parameters<typeof hold>[2]);
    t.is(res.status, 400, JSON.stringify(body));
    t.deepEqual(fields(res.body), [`body:${field}`], res.text);
  }
  const { holdId } = await holdSlot(server(), world, { index: 3 });
  const release = await call(server(), 'POST', `/api/v1/partner/holds/${holdId}/cancel`, {
    key: world.apiKey,
    body: { idempotency_key: randomUUID(), reason: null },
  });
  t.is(release.status, 400);
  t.deepEqual(fields(release.body), ['body:reason']);
});

test('dates and date-times: years 1900 to 9999 that exist; others are 400 naming the field', async (t) => {
  const base = `/api/v1/slots/availability?venue_id=${world.venueId}`;
  for (const date of ['1900-01-01', '9999-12-31', '2028-02-29']) {
    const res = await call(server(), 'GET', `${base}&date=${date}`, { key: world.apiKey });
    t.is(res.status, 200, date);
    t.deepEqual(res.body.slots, [], `${date} lies outside the booking window`);
  }
  for (const date of ['0000-01-01', '0001-01-01', '1899-12-31', '2027-02-29', '2026-13-01', '10000-01-01']) {
    const res = await call(server(), 'GET', `${base}&date=${date}`, { key: world.apiKey });
    t.is(res.status, 400, date);
    t.deepEqual(fields(res.body), ['query:date'], date);
    const list = await call(server(), 'GET', `/api/v1/bookings?from=${date}&to=${date}`, {
      key: world.apiKey,
    });
    t.is(list.status, 400, date);
    t.deepEqual(fields(list.body).sort(), ['query:from', 'query:to'], date);
  }
  const wide = await call(server(), 'GET', '/api/v1/bookings?from=1900-01-01&to=9999-12-31', {
    key: world.apiKey,
  });
  t.is(wide.status, 200);
  for (const start of [
    '0000-01-01T00:00:00Z',
    '1899-12-31T23:59:59Z',
    '2027-02-29T10:00:00Z',
    '2026-11-22T24:30:00Z',
    '2026-11-22T10:00:00',
    '2026-11-22T10:00:00+25:00',
  ]) {
    const res = await hold(server(), world.apiKey, {
      venue_id: world.venueId,
      resource_id: world.court,
      slot_start: start,
    });
    t.is(res.status, 400, start);
    t.deepEqual(fields(res.body), ['body:slot_start'], start);
  }
});

test('a date-time is any ISO 8601 date-time with an offset: without seconds, an hour offset, a comma, the basic form, an ordinal date', async (t) => {
  const { db } = database();
  const slots = await gridSlots(db, world.venueId, world.court, 2);
  const at = (instant: Date, minutes: number) => new Date(instant.getTime() + minutes * 60_000).toISOString();
  // The day of the year of the instant's UTC date, three digits.
  const ordinal = (instant: Date) =>
    String(
      Math.floor((instant.getTime() - Date.UTC(instant.getUTCFullYear(), 0, 1)) / 86_400_000) + 1,
    ).padStart(3, '0');
  const forms: [string, (instant: Date) => string][] = [
    ['no seconds, +05:30', (i) => `${at(i, 330).slice(0, 16)}+05:30`],
    ['an hour offset', (i) => `${at(i, 300).slice(0, 19)}+05`],
    ['a comma before the fraction', (i) => i.toISOString().replace('.', ',')],
    ['the basic form', (i) => i.toISOString().replace(/[-:]|\.000/g, '')],
    ['the basic form with an offset', (i) => `${at(i, -90).slice(0, 16).replace(/[-:]/g, '')}-0130`],
    ['lower-case t and z', (i) => i.toISOString().replace('T', 't').replace('Z', 'z')],
    ['an ordinal date', (i) => `${i.getUTCFullYear()}-${ordinal(i)}${i.toISOString().slice(10)}`],
  ];
  for (const [i, [why, form]] of forms.entries()) {
    const slot = slots[i]!;
    const res = await hold(server(), world.apiKey, {
      venue_id: world.venueId,
      resource_id: world.court,
      slot_start: form(slot.slot_start),
    });
    t.is(res.status, 201, `${why} (${form(slot.slot_start)}): ${res.text}`);
    const held = await database().db('holds').where({ id: res.body.hold_id }).first();
    t.deepEqual(held.slot_start, slot.slot_start, why);
  }
});

test('endpoint_url must be an absolute http(s) URI: no spaces, controls, lone surrogates, credentials or port 0', async (t) => {
  for (const url of [
    ' https://partner.example.com/hooks',
    'https://partner.example.com/ho oks',
    'https://partner.example.com/hooks\t',
    'https://partner.example.com/\u0000',
    'https://partner.example.com/\ud800',
    'https://exämple.com/hooks',
    'https://user:secret@partner.example.com/hooks',
    'https://:@partner.example.com/hooks',
    'https://@partner.example.com/hooks',
    'https:partner.example.com/hooks',
    'https://partner.example.com:0/hooks',
    'https://partner.example.com:000/hooks',
    'https://partner.example.com:65536/hooks',
    'ftp://partner.example.com/hooks',
    'https://partner.example.com/%zz',
    'not a url',
  ]) {
    const res = await call(server(), 'POST', '/api/v1/partner/webhooks', {
      key: world.apiKey,
      body: { endpoint_url: url, event_types: ['hold_created'] },
    });
    t.is(res.status, 400, JSON.stringify(url));
    t.deepEqual([...new Set(fields(res.body))], ['body:endpoint_url'], JSON.stringify(url));
  }
  const nested = await call(server(), 'POST', '/api/v1/partner/webhooks', {
    key: world.apiKey,
    body: { endpoint_url: 'http://127.0.0.1:9/hooks', event_types: ['hold_created', 'booking_confirmed'] },
  });
  t.is(nested.status, 400);
  t.deepEqual(fields(nested.body), ['body:event_types.1'], 'nested fields are dotted paths, as sent');
});

test('query integers are digits only', async (t) => {
  for (const limit of ['1e1', '0x10', ' 5', '5.0', '-1', '', '101', '0']) {
    const res = await call(server(), 'GET', `/api/v1/bookings?limit=${encodeURIComponent(limit)}`, {
      key: world.apiKey,
    });
    t.is(res.status, 400, JSON.stringify(limit));
    t.deepEqual(fields(res.body), ['query:limit']);
  }
  const ok = await call(server(), 'GET', '/api/v1/bookings?limit=7', { key: world.apiKey });
  t.is(ok.status, 200);
});

/** Sends raw bytes (which fetch would refuse to send) and reads the whole answer. */
function raw(request: string): Promise<{ status: number; headers: string; body: string; raw: string }> {
  const { port, hostname } = new URL(server().url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    let data = '';
    socket.on('data', (chunk: Buffer) => (data += chunk.toString('latin1')));
    socket.on('end', () => {
      const [head = '', body = ''] = data.split('\r\n\r\n');
      resolve({ status: Number(head.split(' ')[1]), headers: head, body, raw: data });
    });
    socket.on('error', reject);
    // Without closing its side: Node takes a client's FIN for an abort (nginx does too), and an
    // answer that waits on the database would never come. The server closes after answering.
    socket.write(request, 'latin1');
  });
}

/**
 * Sends `head`, then (after `waitMs`) `body` in 10 KB pieces 20 ms apart, reading nothing until all
 * is sent, as a client that writes its whole request before it reads; resolves with all it read,
 * or fails if the connection was reset under it.
 */
function sendSlowly(head: string, body: string, waitMs = 0): Promise<string> {
  const { port, hostname } = new URL(server().url);
  return new Promise<string>((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    let data = '';
    socket.pause();
    socket.on('data', (chunk: Buffer) => (data += chunk.toString('latin1')));
    socket.on('end', () => resolve(data));
    socket.on('error', (err) => reject(new Error(`${err.message} after ${data.length} bytes`)));
    socket.write(head);
    void (async () => {
      await sleep(waitMs);
      for (let i = 0; i < body.length; i += 10_000) {
        socket.write(body.slice(i, i + 10_000));
        await sleep(20);
      }
      await sleep(100);
      socket.resume();
    })();
  });
}

test('requests HTTP cannot carry get the error body too: a NUL in a header, oversized headers', async (t) => {
  const nul = await raw(
    `GET /api/v1/partner/venues HTTP/1.1\r\nHost: x\r\nX-Request-Id: trace-1\r\nx-api-key: ${world.apiKey}\u0000\r\n\r\n`,
  );
  t.is(nul.status, 400);
  t.regex(nul.headers, /x-request-id: trace-1/i, 'a safe request id is echoed even here');
  t.like(JSON.parse(nul.body), { error: 'VALIDATION_ERROR', details: [{ in: 'header' }] });
  t.regex(nul.headers, /content-type: application\/json/i);
  // Answered by the server, not the app: still never kept by a cache, as every keyed route's answer.
  t.regex(nul.headers, /cache-control: no-store/i);

  const huge = await raw(
    `GET /api/v1/partner/venues HTTP/1.1\r\nHost: x\r\nx-api-key: ${'a'.repeat(20_000)}\r\n\r\n`,
  );
  t.is(huge.status, 431);
  t.is(JSON.parse(huge.body).error, 'REQUEST_HEADERS_TOO_LARGE');
  t.regex(huge.headers, /cache-control: no-store/i);

  const framing = await raw(
    `GET /api/v1/partner/venues HTTP/1.1 extra\r\nHost: x\r\nx-api-key: ${world.apiKey}\r\n\r\n`,
  );
  t.is(framing.status, 400);
  t.regex(framing.headers, /cache-control: no-store/i);
});

test('a request target that is no URL (an absolute form with a bad host) is 400 with the error body, not a 500', async (t) => {
  for (const target of ['http://[', 'https://[fe80::1%25eth0]/api/v1/partner/venues']) {
    const res = await raw(
      `GET ${target} HTTP/1.1\r\nHost: x\r\nX-Request-Id: target-1\r\nx-api-key: ${world.apiKey}\r\nConnection: close\r\n\r\n`,
    );
    t.is(res.status, 400, res.raw);
    t.regex(res.headers, /x-request-id: target-1/i);
    t.like(JSON.parse(res.body), {
      error: 'VALIDATION_ERROR',
      request_id: 'target-1',
      details: [{ field: '', in: 'path' }],
    });
  }
});

test('a request refused for its headers is answered even while its body is still on its way', async (t) => {
  // The body arrives after the answer: its bytes fail to parse again. The connection must not be
  // reset under the client, which reads only once it has sent everything (the answer would be lost
  // with the reset: a fuzzer's 90 KB body after a U+0000 in x-api-key got no answer at all).
  const body = 'x'.repeat(90_000);
  const answer = await sendSlowly(
    `POST /api/v1/bookings/hold HTTP/1.1\r\nHost: x\r\nx-api-key: ${world.apiKey}\u0000\r\n` +
      `content-type: application/json\r\ncontent-length: ${body.length}\r\n\r\n`,
    body,
    100, // the headers are refused and answered meanwhile
  );
  t.regex(answer, /^HTTP\/1\.1 400 /);
  t.like(JSON.parse(answer.split('\r\n\r\n')[1]!), {
    error: 'VALIDATION_ERROR',
    details: [{ in: 'header' }],
  });
});

test('a U+0000 in a header that Node refuses to parse is named in the error', async (t) => {
  for (const header of ['x-api-key', 'X-Custom-Note']) {
    const res = await raw(
      `GET /api/v1/partner/venues HTTP/1.1\r\nHost: x\r\nx-api-key: ${world.apiKey}\r\n` +
        `${header}: ab\u0000cd\r\nConnection: close\r\n\r\n`,
    );
    t.is(res.status, 400);
    t.like(JSON.parse(res.body), {
      error: 'VALIDATION_ERROR',
      details: [{ field: header.toLowerCase(), in: 'header' }],
    });
  }
});

test("a U+0000 in the stream's Last-Event-ID is named as every other refusal of it names it", async (t) => {
  // CONTRACT.md: the stream's refusals have `in: header` with field `Last-Event-ID`, in whatever
  // case the client wrote the header; Node's parser refuses this one before the stream's own check.
  for (const name of ['Last-Event-ID', 'last-event-id']) {
    const res = await raw(
      `GET /api/v1/slots/availability/stream?venue_id=${world.venueId} HTTP/1.1\r\nHost: x\r\n` +
        `x-api-key: ${world.apiKey}\r\n${name}: 2\u0000\r\nConnection: close\r\n\r\n`,
    );
    t.is(res.status, 400, name);
    t.regex(res.headers, /x-ratelimit-remaining: \d+\r\n/i);
    t.deepEqual(JSON.parse(res.body).details, [
      {
        field: 'Last-Event-ID',
        in: 'header',
        message: 'a header or the request line has a character HTTP does not allow',
      },
    ]);
  }
});

test('a header Node refuses is judged after the key and the rate limit, like any invalid input', async (t) => {
  // CONTRACT.md: validation, U+0000 included, runs after authentication and the rate limit, so a
  // valid key hears its rate-limit headers (its request is counted) and a missing one hears 401.
  const { apiKey } = await makePartner(database().db, { rateLimit: 3 });
  const venues = (headers: string) =>
    raw(`GET /api/v1/partner/venues HTTP/1.1\r\nHost: x\r\n${headers}Connection: close\r\n\r\n`);
  const noted = `X-Request-Id: trace-nul\r\nX-Note: a\u0000b\r\n`;

  const first = await venues(`x-api-key: ${apiKey}\r\n${noted}`);
  t.is(first.status, 400);
  t.regex(first.headers, /x-ratelimit-limit: 3\r\n/i);
  t.regex(first.headers, /x-ratelimit-remaining: 2\r\n/i);
  t.regex(first.headers, /x-request-id: trace-nul\r\n/i);
  t.regex(first.headers, /connection: close/i);
  t.like(JSON.parse(first.body), {
    error: 'VALIDATION_ERROR',
    request_id: 'trace-nul',
    details: [{ field: 'x-note', in: 'header' }],
  });
  // A control character other than U+0000 (Node refuses those too), in an upper-case name.
  const second = await venues(`x-api-key: ${apiKey}\r\nX-OTHER-Note: a\u0007b\r\n`);
  t.is(second.status, 400);
  t.regex(second.headers, /x-ratelimit-remaining: 1\r\n/i);
  t.like(JSON.parse(second.body), { details: [{ field: 'x-other-note', in: 'header' }] });
  await venues(`x-api-key: ${apiKey}\r\n${noted}`);
  const over = await venues(`x-api-key: ${apiKey}\r\n${noted}`);
  t.is(over.status, 429);
  t.regex(over.headers, /retry-after: \d+\r\n/i);
  t.is(JSON.parse(over.body).error, 'RATE_LIMIT_EXCEEDED');

  for (const keys of [
    '',
    'x-api-key: ' + 'f'.repeat(64) + '\r\n',
    `x-api-key: ${world.apiKey}\r\n`.repeat(2),
  ]) {
    const anonymous = await venues(keys + noted);
    t.is(anonymous.status, 401, keys);
    t.false(/x-ratelimit/i.test(anonymous.headers));
    t.is(JSON.parse(anonymous.body).error, 'UNAUTHORIZED');
  }
  // A route that needs no key refuses the header at once; an unknown path is 404 as always.
  const health = await raw(`GET /health HTTP/1.1\r\nHost: x\r\nX-Note: a\u0000b\r\n\r\n`);
  t.is(health.status, 400);
  t.like(JSON.parse(health.body), { details: [{ field: 'x-note', in: 'header' }] });
  const unknown = await raw(`GET /api/v1/nowhere HTTP/1.1\r\nHost: x\r\nX-Note: a\u0000b\r\n\r\n`);
  t.is(unknown.status, 404);
});

test('a write whose header Node refuses is answered after its key, its body left unread', async (t) => {
  const body = JSON.stringify({ venue_id: world.venueId, filler: 'x'.repeat(60_000) });
  const answer = await sendSlowly(
    `POST /api/v1/bookings/hold HTTP/1.1\r\nHost: x\r\nx-api-key: ${world.apiKey}\r\n` +
      `Idempotency-Key: k\u0000y\r\ncontent-type: application/json\r\n` +
      `content-length: ${body.length}\r\n\r\n${body.slice(0, 1000)}`,
    body.slice(1000),
  );
  const [head = '', text = ''] = answer.split('\r\n\r\n');
  t.regex(head, /^HTTP\/1\.1 400 /);
  t.regex(head, /x-ratelimit-remaining: \d+\r\n/i);
  t.like(JSON.parse(text), {
    error: 'VALIDATION_ERROR',
    details: [{ field: 'idempotency-key', in: 'header' }],
  });
});

test('what Node would answer on its own goes through the API: no Host, two, an odd Expect, CONNECT', async (t) => {
  const { apiKey } = await makePartner(database().db);
  const venues = (head: string) =>
    raw(`GET /api/v1/partner/venues HTTP/1.1\r\n${head}x-api-key: ${apiKey}\r\nConnection: close\r\n\r\n`);
  // RFC 9112: an HTTP/1.1 request with no Host, or two, is 400 (Node's was bare, without the body).
  for (const head of ['', 'Host: a\r\nHost: b\r\n']) {
    const res = await venues(head);
    t.is(res.status, 400, head);
    t.regex(res.headers, /x-ratelimit-remaining: \d+\r\n/i);
    t.like(JSON.parse(res.body), { error: 'VALIDATION_ERROR', details: [{ field: 'host', in: 'header' }] });
  }
  const http10 = await raw(`GET /api/v1/partner/venues HTTP/1.0\r\nx-api-key: ${apiKey}\r\n\r\n`);
  t.is(http10.status, 200, 'HTTP/1.0 needs no Host');
  // An expectation the service cannot meet is ignored (RFC 9110 allows it; Node answered a bare 417).
  const teapot = await venues('Host: x\r\nExpect: teapot\r\n');
  t.is(teapot.status, 200);
  t.true(Array.isArray(JSON.parse(teapot.body).data));
  // CONNECT: Node dropped the connection unanswered.
  const tunnel = await raw(
    `CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\nx-api-key: ${apiKey}\r\n\r\n`,
  );
  t.is(tunnel.status, 404);
  t.regex(tunnel.headers, /x-ratelimit-remaining: \d+\r\n/i);
  t.like(JSON.parse(tunnel.body), { error: 'NOT_FOUND', message: 'No route CONNECT example.com:443.' });
});

test('a pipelined request Node refuses is answered after the requests before it, in order', async (t) => {
  // HTTP/1.1 answers pipelined requests in order; the refusal was written at once, over (and
  // ending the connection under) the answer still being made for the request before it.
  const good = `GET /api/v1/partner/venues HTTP/1.1\r\nHost: x\r\nX-Request-Id: good-1\r\nx-api-key: ${world.apiKey}\r\n\r\n`;
  for (const bad of [
    `GET /api/v1/partner/venues HTTP/1.1\r\nHost: x\r\nX-Request-Id: bad-1\r\nx-api-key: ${world.apiKey}\r\nX-Note: a\u0000b\r\n\r\n`,
    `GET /api/v1/partner/venues HTTP/1.1\r\nHost: x\r\nX-Request-Id: bad-1\r\nx-api-key: a\u0000b\r\n\r\n`,
  ]) {
    const res = await raw(good + good + bad);
    const statuses = [...res.raw.matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((m) => Number(m[1]));
    t.deepEqual(statuses, [200, 200, 400]);
    const refusal = res.raw.slice(res.raw.lastIndexOf('HTTP/1.1 400'));
    t.regex(refusal, /"error":"VALIDATION_ERROR"/);
    t.regex(refusal, /x-request-id: bad-1\r\n/i, 'its own request id, not the first of the bytes');
    // Read from the third request's own head: its key was judged (the second bad one has none).
    t.is(/x-ratelimit-remaining: \d+/i.test(refusal), !bad.includes('x-api-key: a\u0000b'));
  }
});

test('x-api-key sent twice is 401, even with one valid key twice', async (t) => {
  const res = await raw(
    `GET /api/v1/partner/venues HTTP/1.1\r\nHost: x\r\nConnection: close\r\n` +
      `x-api-key: ${world.apiKey}\r\nx-api-key: ${world.apiKey}\r\n\r\n`,
  );
  t.is(res.status, 401);
  t.is(JSON.parse(res.body).error, 'UNAUTHORIZED');
});

test('a valid key sent to an unknown path is counted and told where it stands', async (t) => {
  const res = await call(server(), 'GET', '/api/v1/no-such-thing', { key: world.apiKey });
  t.is(res.status, 404);
  t.true(res.headers.has('x-ratelimit-remaining'));
  const anonymous = await call(server(), 'GET', '/api/v1/no-such-thing', { key: 'f'.repeat(64) });
  t.is(anonymous.status, 404);
  t.false(anonymous.headers.has('x-ratelimit-remaining'));
});

test('a path is matched in any case and with a trailing slash, root aliases too; one of no route is 404', async (t) => {
  // As @koa/router matches (case-insensitive, a trailing slash allowed): what partners' clients may
  // already rely on, kept by any change to routing; a path no route has answers 404.
  const venues = await call(server(), 'GET', '/API/V1/Partner/Venues/', { key: world.apiKey });
  t.is(venues.status, 200);
  t.true(venues.body.data.some((v: { venue_id: string }) => v.venue_id === world.venueId));
  const venue = await call(server(), 'GET', `/api/v1/PARTNER/venues/${world.venueId}`, { key: world.apiKey });
  t.is(venue.status, 200);
  t.is(venue.body.data.venue_id, world.venueId);
  t.is((await call(server(), 'GET', '/HEALTH/live')).status, 200);
  t.is((await call(server(), 'GET', '/api/v1/health/')).status, 200);
  for (const path of [
    '/',
    '/api/v1',
    '/api/v1/',
    '/api',
    '/api/v2/partner/venues',
    '/api/v1/partnerx/venues',
    '/api/v1//partner/venues',
    '/api/v1/partner%2Fvenues',
    '/healthz',
  ]) {
    const res = await call(server(), 'GET', path, { key: world.apiKey });
    t.is(res.status, 404, path);
    t.is(res.body.error, 'NOT_FOUND', path);
  }
  // The method decides within a path's routes, as before: a DELETE of a POST-only path is 404.
  t.is((await call(server(), 'DELETE', '/api/v1/bookings/confirm', { key: world.apiKey })).status, 404);
});

/** `depth` arrays inside one another around `inner`, written as text (12 KB at 6,000). */
const nestedArrays = (depth: number, inner = '0') => '['.repeat(depth) + inner + ']'.repeat(depth);
/** `depth` objects inside one another, each with one member `a`. */
const nestedObjects = (depth: number) => '{"a":'.repeat(depth) + '0' + '}'.repeat(depth);

test('partner_id and unknown members are ignored at any depth: every write still answers 201', async (t) => {
  const { db } = database();
  const packageId = await makePackage(db, { venueId: world.venueId });
  const date = await localDate(db, world.venueId, 1);
  const slots = await gridSlots(db, world.venueId, world.court);
  // A body under 64 KiB, `partner_id` and an unknown member nested thousands deep.
  const shapes = [nestedArrays(6000), nestedObjects(2000), nestedArrays(14_000)];
  for (const [i, shape] of shapes.entries()) {
    const post = (path: string, fields: Record<string, unknown>) => {
      const json = JSON.stringify(fields).slice(0, -1);
      const rawBody = `${json},"partner_id":${shape},"unknown_member":${shape}}`;
      t.true(Buffer.byteLength(rawBody) < 64 * 1024);
      return call(server(), 'POST', `/api/v1${path}`, {
        key: world.apiKey,
        rawBody,
        headers: { 'content-type': 'application/json' },
      });
    };
    const held = await post('/bookings/hold', {
      venue_id: world.venueId,
      resource_id: world.court,
      slot_start: slots[10 + i]!.slot_start.toISOString(),
      slot_duration_minutes: 60,
      idempotency_key: randomUUID(),
    });
    t.is(held.status, 201, held.text);
    const confirmKey = randomUUID();
    const confirmBody = {
      hold_id: held.body.hold_id,
      payment_reference: 'pay-1',
      customer_name: 'Asha Rao',
      customer_phone: '9812345678',
      idempotency_key: confirmKey,
    };
    const confirmed = await post('/bookings/confirm', confirmBody);
    t.is(confirmed.status, 201, confirmed.text);
    // The ignored members are no part of the request: the same confirm without them replays it.
    const replay = await call(server(), 'POST', '/api/v1/bookings/confirm', {
      key: world.apiKey,
      body: confirmBody,
    });
    t.deepEqual([replay.status, replay.body], [201, confirmed.body]);
    const purchased = await post(`/packages/${packageId}/purchase`, {
      customer_phone: '9812345678',
      payment_method: 'upi',
      idempotency_key: randomUUID(),
    });
    t.is(purchased.status, 201, purchased.text);
    const joined = await post('/waitlist', {
      venue_id: world.venueId,
      resource_id: world.court,
      slot_date: date,
      customer_phone: `98123456${String(i).padStart(2, '0')}`,
    });
    t.is(joined.status, 201, joined.text);
    const subscribed = await post('/partner/webhooks', {
      endpoint_url: `http://127.0.0.1:9/hook-${i}`,
      event_types: ['hold_created'],
    });
    t.is(subscribed.status, 201, subscribed.text);
  }
});
