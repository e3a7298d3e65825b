/**
 * The client package: its generated types are those of the document the service serves now (a
 * stale `client/src/schema.ts` fails here: run `npm run client:types`), and its `verifyWebhook`
 * accepts what the service signs and what the `standardwebhooks` library signs, by either scheme,
 * and refuses anything altered.
 */
import test from 'ava';
import { readFile } from 'node:fs/promises';
import { Webhook } from 'standardwebhooks';
import { verifyWebhook } from '../../client/src/index.ts';
import { generatedTypes, SCHEMA_FILE } from '../../client/scripts/generate-types.ts';
import {
  signStandardWebhook,
  signWebhook,
  standardWebhooksSecret,
} from '../../db/rules/webhook-signature.ts';

test('client/src/schema.ts is what openapi-typescript makes of the served document', async (t) => {
  t.true(
    (await readFile(SCHEMA_FILE, 'utf8')) === (await generatedTypes()),
    'stale: run npm run client:types',
  );
});

test('verifyWebhook: both schemes, as the service and the standardwebhooks library sign', (t) => {
  const secret = 'a3f1c9e07b2d4f6a8c0e1b3d5f7a9c2e4b6d8f0a1c3e5b7d9f2a4c6e8b0d1f3a';
  const standard = standardWebhooksSecret(secret);
  const body = JSON.stringify({
    event_id: '1a2b3c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d',
    event_type: 'booking_created',
    details: { slot_start: '2026-11-23T00:30:00.000Z' },
  });
  const now = Math.floor(Date.now() / 1000);
  const id = '1a2b3c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d';
  const headers = {
    'X-Service-Timestamp': String(now),
    'X-Service-Signature': signWebhook(secret, now, body),
    'webhook-id': id,
    'webhook-timestamp': String(now),
    'webhook-signature': signStandardWebhook(secret, id, now, body),
  };
  t.like(verifyWebhook({ rawBody: body, headers, secret }), {
    ok: true,
    event: { event_type: 'booking_created' },
  });
  t.like(verifyWebhook({ rawBody: Buffer.from(body), headers: new Headers(headers), secret: standard }), {
    ok: true,
  });
  const library = new Webhook(standard).sign(id, new Date(now * 1000), body);
  t.like(
    verifyWebhook({
      rawBody: body,
      headers: {
        'webhook-id': id,
        'webhook-timestamp': String(now),
        'webhook-signature': `v1,old ${library}`,
      },
      secret: standard,
    }),
    { ok: true },
    'a signature the library made, one of several listed',
  );
  for (const key of [secret, standard]) {
    t.like(verifyWebhook({ rawBody: body.replace('created', 'refunded'), headers, secret: key }), {
      ok: false,
      reason: 'signature_mismatch',
    });
    t.like(verifyWebhook({ rawBody: body, headers, secret: key, now: now + 301 }), {
      ok: false,
      reason: 'timestamp_outside_tolerance',
    });
    t.like(verifyWebhook({ rawBody: body, headers: {}, secret: key }), {
      ok: false,
      reason: 'missing_headers',
    });
  }
  t.like(verifyWebhook({ rawBody: body, headers, secret: standardWebhooksSecret('another') }), {
    ok: false,
    reason: 'signature_mismatch',
  });
});
