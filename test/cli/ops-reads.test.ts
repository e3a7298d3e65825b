/**
 * The operator CLI's reads and recovery (CONTRACT.md, "Operator reads and recovery"): partner:list,
 * venue:list, deliveries:list and deliveries:redeliver on real deliveries, key:replace with a grace
 * period, and --help everywhere (plain text, exit 0, no database needed, nothing changed).
 */
import test from 'ava';
import * as grants from '../../db/queries/venue-grants.ts';
import { makeBookingWorld } from '../helpers/booking.ts';
import { useTestDatabase } from '../helpers/database.ts';
import { call, useTestServer } from '../helpers/http.ts';
import { runOps } from '../helpers/ops.ts';
import { waitFor } from '../helpers/wait.ts';
import { deliveryFor, localResolver, startReceiver } from '../helpers/webhooks.ts';
import { COMMANDS } from '../../db/cli/main.ts';

const database = useTestDatabase(test);
const server = useTestServer(test, database);
const ops = (...args: string[]) => runOps({ DATABASE_URL: database().url }, ...args);

test.serial('partner:list and venue:list show partners, keys and grants; --partner narrows', async (t) => {
  const { db } = database();
  const w = await makeBookingWorld(db);
  const other = await makeBookingWorld(db);
  await grants.grant(db, w.partnerId, other.venueId);
  const partners = (await ops('partner:list')).json.partners as Record<string, any>[];
  const listed = partners.find((p) => p.partner_id === w.partnerId);
  t.like(listed, { active_keys: 1 });
  t.deepEqual([...listed!.venue_ids].sort(), [w.venueId, other.venueId].sort());
  t.regex(listed!.created_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);

  const all = (await ops('venue:list')).json.venues as Record<string, any>[];
  t.true(all.some((v) => v.venue_id === w.venueId) && all.some((v) => v.venue_id === other.venueId));
  const mine = (await ops('venue:list', '--partner', w.partnerId)).json.venues as Record<string, any>[];
  t.deepEqual(mine.map((v) => v.venue_id).sort(), [w.venueId, other.venueId].sort());
  const theirs = (await ops('venue:list', '--partner', other.partnerId)).json.venues as Record<string, any>[];
  t.deepEqual(
    theirs.map((v) => v.venue_id),
    [other.venueId],
  );
  t.like(theirs[0], { status: 'active', partner_ids: [other.partnerId, w.partnerId].sort() });
  const unknown = await ops('venue:list', '--partner', '00000000-0000-4000-8000-000000000000');
  t.is(unknown.code, 1);
  t.regex(unknown.stderr, /no partner with id/);
});

test.serial(
  'deliveries:list finds a dead letter by partner and status; deliveries:redeliver sends it again as attempt 1',
  async (t) => {
    const receiver = await startReceiver(() => '');
    t.teardown(() => receiver.close());
    receiver.respond = () => 503;
    const dns = localResolver();
    const d = await deliveryFor(
      database(),
      server(),
      `http://partner-cli.example.test:${receiver.port}/hooks`,
      {
        lookup: dns.lookup,
      },
    );
    await d.runDue();
    for (let attempt = 2; attempt <= 5; attempt++) await d.runScheduled();
    t.like(await d.state(), { status: 'dead_letter', attempts: 5 });

    const listed = await ops('deliveries:list', '--partner', d.partnerId, '--status', 'dead_letter');
    t.is(listed.code, 0, listed.stderr);
    const [item] = listed.json.deliveries as Record<string, any>[];
    t.like(item, {
      event_id: d.event.id,
      event_type: 'hold_created',
      subscription_id: d.sub.id,
      partner_id: d.partnerId,
      status: 'dead_letter',
      attempts: 5,
    });
    t.is(
      item!.delivery_id,
      receiver.received.at(-1)!.headers['x-delivery-id'],
      'the last attempt, as the API shows it',
    );
    t.deepEqual(
      (await ops('deliveries:list', '--status', 'delivered', '--partner', d.partnerId)).json.deliveries,
      [],
    );
    t.is((await ops('deliveries:list', '--limit', '0')).code, 2);

    const notDead = await ops('deliveries:redeliver', '--delivery', '00000000-0000-4000-8000-000000000000');
    t.regex(notDead.stderr, /no delivery with id/);
    const again = await ops('deliveries:redeliver', '--delivery', item!.delivery_id as string);
    t.is(again.code, 0, again.stderr);
    t.like(again.json, { event_id: d.event.id, status: 'pending' });
    t.not(again.json.delivery_id, item!.delivery_id, 'the new round is sent under a new id, which it names');
    const pending = await ops('deliveries:list', '--partner', d.partnerId, '--status', 'pending');
    t.is(
      pending.json.deliveries[0].delivery_id,
      again.json.delivery_id,
      'listed by the attempt it will send',
    );
    const twice = await ops('deliveries:redeliver', '--delivery', item!.delivery_id as string);
    t.is(twice.code, 1);
    t.regex(twice.stderr, /the delivery is pending; only a dead letter can be redelivered/);

    receiver.respond = () => 204;
    const sent = receiver.received.length;
    await d.runDue(); // the attempt the CLI put back in line, due now
    await waitFor(() => receiver.received.length === sent + 1);
    const redelivered = receiver.received.at(-1)!;
    t.is(redelivered.headers['x-delivery-attempt'], '1', 'attempts counted afresh');
    t.is(redelivered.headers['x-delivery-id'], again.json.delivery_id, 'as deliveries:redeliver said');
    t.is(redelivered.headers['webhook-id'], d.event.id, 'the same event, the same webhook-id');
    t.like(await d.state(), { status: 'delivered', attempts: 1 });
    t.is((await d.attempts()).length, 6, 'five attempts, then the one of the redelivery');
  },
);

test.serial('key:replace --grace-seconds: the older key works for that long, then stops', async (t) => {
  const { json: partner } = await ops('partner:create', '--name', 'Graceful');
  const venues = (key: string) => call(server(), 'GET', '/api/v1/partner/venues', { key });
  const before = Date.now();
  const replaced = await ops('key:replace', '--partner', partner.partner_id, '--grace-seconds', '3');
  t.is(replaced.code, 0, replaced.stderr);
  t.is((await venues(partner.api_key)).status, 200, 'the older key still works');
  t.is((await venues(replaced.json.api_key)).status, 200);
  const [old] = await database()
    .db('api_keys')
    .where({ partner_id: partner.partner_id })
    .whereNotNull('expires_at');
  const stops = new Date(old.expires_at).getTime();
  t.true(stops >= before + 3000 && stops <= Date.now() + 3000, 'three seconds from the command');
  await waitFor(async () => (await venues(partner.api_key)).status === 401, { timeout: 15_000 });
  t.true(Date.now() >= stops, 'not before its time');
  t.is((await venues(replaced.json.api_key)).status, 200, 'the new key is untouched');

  const atOnce = await ops('key:replace', '--partner', partner.partner_id, '--grace-seconds', '0');
  t.is((await venues(replaced.json.api_key)).status, 401, '0 revokes at once');
  t.is((await venues(atOnce.json.api_key)).status, 200);
  for (const bad of ['-1', '2592001', '1.5', 'x']) {
    t.is((await ops('key:replace', '--partner', partner.partner_id, '--grace-seconds', bad)).code, 2, bad);
  }
  t.is((await ops('key:replace', '--partner', partner.partner_id, '--grace-seconds', '2592000')).code, 0);
});

test.serial('--help, alone or after any command, prints usage, exits 0, needs no database', async (t) => {
  const general = await runOps({ DATABASE_URL: undefined }, '--help');
  t.is(general.code, 0);
  t.regex(general.stdout, /^usage: npm run --silent ops -- <command>/);
  for (const command of COMMANDS) {
    t.true(general.stdout.includes(`  ${command.name}`), command.name);
    const own = await runOps({ DATABASE_URL: undefined }, command.name, '--partner', 'not-an-id', '--help');
    t.is(own.code, 0, command.name);
    t.regex(own.stdout, new RegExp(`^usage: npm run --silent ops -- ${command.name}`), command.name);
    for (const flag of Object.keys(command.flags.shape))
      t.true(own.stdout.includes(`--${flag}`), `${command.name} --${flag}`);
  }
  const before = await database().db('partners').count({ n: '*' });
  t.is((await runOps({ DATABASE_URL: database().url }, 'partner:create', '--name', 'X', '--help')).code, 0);
  t.deepEqual(await database().db('partners').count({ n: '*' }), before, 'nothing created');
});
