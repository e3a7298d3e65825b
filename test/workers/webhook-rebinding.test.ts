/**
 * DNS rebinding: a name that answers a public address when the subscription is checked and
 * 127.0.0.1 when the attempt connects. The check that counts is the one inside the connection, on
 * the address actually dialled: no request reaches the local receiver, every attempt fails with a
 * coarse reason, and observability never shows what an internal service would have answered.
 */
import test from 'ava';
import { refuseTarget } from '../../db/rules/webhook-targets.ts';
import { NON_PUBLIC_TARGET } from '../../workers/webhook-http.ts';
import { MAX_ATTEMPTS } from '../../db/rules/webhook-attempts.ts';
import { testConfig, useTestDatabase } from '../helpers/database.ts';
import { call, useTestServer } from '../helpers/http.ts';
import { deliveryFor, notFound, startReceiver, testResolver } from '../helpers/webhooks.ts';

const database = useTestDatabase(test);
const server = useTestServer(test, database);
const strict = testConfig({ SERVICE_ENV: 'sandbox', WEBHOOK_ALLOW_PRIVATE_TARGETS: 'false' });

test.serial(
  'a name that rebinds to 127.0.0.1 after the subscribe check gets no request through',
  async (t) => {
    const internal = await startReceiver(() => '');
    t.teardown(() => internal.close());
    internal.respond = () => 418; // what an internal service would answer, never to be seen
    const dns = testResolver((_, call) => (call === 1 ? '93.184.216.34' : '127.0.0.1'));
    const url = `http://rebind.example.test:${internal.port}/hooks`;

    // Subscribe time: the name answers a public address, so the endpoint is accepted. (The test
    // API's own check cannot take our resolver; this is the same function with it.)
    t.is(await refuseTarget(url, strict.webhookAllowPrivateTargets, dns.lookup), undefined);
    const d = await deliveryFor(database(), server(), url, { config: strict, lookup: dns.lookup });

    for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
      await d.runScheduled();
      t.like(await d.state(), { attempts: attempt, last_status_code: null, last_error: NON_PUBLIC_TARGET });
    }
    t.is(internal.received.length, 0, 'nothing reached the local receiver');
    t.is(dns.calls.length, 1 + MAX_ATTEMPTS, 'every attempt resolved the name again, inside its connection');
    t.true(
      (await d.attempts()).every((a) => a.status_code === null && a.error === NON_PUBLIC_TARGET),
      'no attempt recorded an internal status',
    );
    const observed = await call(server(), 'GET', '/api/v1/partner/observability', { key: d.apiKey });
    t.is(observed.body.deliveries.dead_letter, 1);
    t.like(observed.body.dead_letters[0], {
      event_id: d.event.id,
      attempts: MAX_ATTEMPTS,
      last_status_code: null,
      last_error: NON_PUBLIC_TARGET,
    });
  },
);

test.serial('one non-public address among several answers refuses the name, over https too', async (t) => {
  const dns = testResolver((host) => (host === 'mixed.example.test' ? '93.184.216.34' : '127.0.0.1'));
  const both = testResolver(() => '93.184.216.34');
  // An answer holding a public and a private address: the connection may try either.
  const mixed = {
    lookup: ((hostname, options, callback) =>
      options.all
        ? callback(null, [
            { address: '93.184.216.34', family: 4 },
            { address: '::ffff:169.254.169.254', family: 6 },
          ])
        : both.lookup(hostname, options, callback)) as typeof dns.lookup,
  };
  for (const [url, lookup] of [
    ['https://mixed.example.test/hooks', mixed.lookup],
    ['https://inside.example.test/hooks', dns.lookup],
  ] as const) {
    const d = await deliveryFor(database(), server(), url, { config: strict, lookup });
    await d.runScheduled();
    t.like(await d.state(), { status: 'failed', last_status_code: null, last_error: NON_PUBLIC_TARGET }, url);
  }
});

test.serial(
  'a name that stops resolving reads as a private one: last_error never tells them apart',
  async (t) => {
    const gone = testResolver((host) => (host === 'gone.example.test' ? notFound(host) : '10.0.0.7'));
    const errors = [];
    for (const url of ['https://gone.example.test/hooks', 'https://inside.example.test/hooks']) {
      const d = await deliveryFor(database(), server(), url, { config: strict, lookup: gone.lookup });
      await d.runScheduled();
      errors.push((await d.state()).last_error);
    }
    t.deepEqual(errors, [NON_PUBLIC_TARGET, NON_PUBLIC_TARGET]);
    t.notRegex(NON_PUBLIC_TARGET, /example|10\.0/);
  },
);
