/**
 * The operator CLI, run as operators run it: a child process with DATABASE_URL, one JSON object on
 * stdout on success, a one-line reason on stderr and a non-zero exit on failure with nothing changed.
 * Serial, because "nothing changed" is checked by counting rows.
 */
import test, { type ExecutionContext } from 'ava';
import { useTestDatabase } from '../helpers/database.ts';
import { call, useTestServer } from '../helpers/http.ts';
import { runOps, type OpsResult } from '../helpers/ops.ts';
import { partnerCommands } from '../../db/cli/partner-commands.ts';

const database = useTestDatabase(test);
/** A command on this file's database. */
const ops = (...args: string[]): Promise<OpsResult> => runOps({ DATABASE_URL: database().url }, ...args);

async function counts(): Promise<Record<string, number>> {
  const tables = [
    'partners',
    'api_keys',
    'venues',
    'resources',
    'resource_parts',
    'venue_grants',
    'packages',
  ];
  const out: Record<string, number> = {};
  for (const table of tables) {
    const [row] = await database().db(table).count({ n: '*' });
    out[table] = Number(row?.n);
  }
  return out;
}

/** Asserts a failed command: non-zero exit, nothing on stdout, one line on stderr, no rows changed. */
async function assertRefused(t: ExecutionContext, args: string[], reason: RegExp) {
  const before = await counts();
  const result = await ops(...args);
  t.not(result.code, 0, args.join(' '));
  t.is(result.stdout, '', args.join(' '));
  t.is(result.stderr.trim().split('\n').length, 1, args.join(' '));
  t.regex(result.stderr, reason, args.join(' '));
  t.deepEqual(await counts(), before, `${args.join(' ')} changed nothing`);
}

const server = useTestServer(test, database);

/** resource:create for a football pitch; `extra` flags replace the pitch's own (each is given once). */
function pitch(venueId: string, ...extra: string[]): string[] {
  const flags = new Map(
    Object.entries({
      type: 'half',
      sport: 'football',
      duration: '60',
      price: '800',
      open: '06:00',
      close: '23:00',
    }),
  );
  for (let i = 0; i < extra.length; i += 2) flags.set(extra[i]!.slice(2), extra[i + 1]!);
  return [
    'resource:create',
    '--venue',
    venueId,
    ...[...flags].flatMap(([flag, value]) => [`--${flag}`, value]),
  ];
}

test.serial('partner:create prints {partner_id, api_key}; the key works against the API', async (t) => {
  const created = await ops('partner:create', '--name', 'Acme Bookings');
  t.is(created.code, 0);
  t.deepEqual(Object.keys(created.json).sort(), ['api_key', 'partner_id']);
  t.regex(created.json.api_key, /^[0-9a-f]{64}$/);
  t.is(created.stdout.trim().split('\n').length, 1, 'exactly one line of JSON');
  const res = await call(server(), 'GET', '/api/v1/partner/venues', { key: created.json.api_key });
  t.is(res.status, 200);
  t.is(res.headers.get('x-ratelimit-remaining'), '59', 'default limit 60');
});

test.serial('partner:create --rate-limit and partner:rate-limit set the window size', async (t) => {
  const created = await ops('partner:create', '--name', 'Burst', '--rate-limit', '500');
  const key = created.json.api_key;
  t.is(
    (await call(server(), 'GET', '/api/v1/partner/venues', { key })).headers.get('x-ratelimit-limit'),
    '500',
  );
  const changed = await ops('partner:rate-limit', '--partner', created.json.partner_id, '--limit', '7');
  t.deepEqual(changed.json, { partner_id: created.json.partner_id, rate_limit: 7 });
  t.is(
    (await call(server(), 'GET', '/api/v1/partner/venues', { key })).headers.get('x-ratelimit-limit'),
    '7',
  );
});

test.serial(
  'two key:replace at once leave one live key: the later waits for the earlier and revokes its key',
  async (t) => {
    // Each revoked the keys committed when it started, so neither saw the other's new key and both
    // stayed live (an operator's double-submitted rotation, or two scripts).
    const { db } = database();
    const { json: partner } = await ops('partner:create', '--name', 'Rotated twice');
    const replace = partnerCommands.find((c) => c.name === 'key:replace')!;
    const first = await db.transaction();
    await replace.run(first, { partner: partner.partner_id });
    let secondDone = false;
    const second = db
      .transaction((trx) => replace.run(trx, { partner: partner.partner_id }))
      .finally(() => (secondDone = true));
    await new Promise((resolve) => setTimeout(resolve, 300));
    t.false(secondDone, 'the second waits for the first to commit');
    await first.commit();
    await second;
    const live = await db.raw<{ rows: { n: number }[] }>(
      'select count(*)::int as n from api_keys k where k.partner_id = ? and api_key_is_live(k)',
      [partner.partner_id],
    );
    t.is(live.rows[0]!.n, 1);
  },
);

test.serial('Node warnings are one line each on stderr (sslmode=require), the reason one more', async (t) => {
  // pg warns, in nine lines, that sslmode=require will mean what libpq means by it; the server here
  // has no SSL (or a certificate nobody verifies), so the command fails.
  const url = new URL(database().url);
  url.searchParams.set('sslmode', 'require');
  const result = await runOps({ DATABASE_URL: url.toString() }, 'partner:list');
  t.is(result.code, 1);
  const lines = result.stderr.trimEnd().split('\n');
  t.is(lines.length, 2, result.stderr);
  t.regex(lines[0]!, /^warning: .*sslmode|^warning: .*SSL/i);
  t.regex(lines[1]!, /^partner:list: failed: /);
});

test.serial('key:replace revokes every older key; key:revoke revokes all', async (t) => {
  const { json: partner } = await ops('partner:create', '--name', 'Rotating');
  const replaced = await ops('key:replace', '--partner', partner.partner_id);
  t.is(replaced.json.partner_id, partner.partner_id);
  t.not(replaced.json.api_key, partner.api_key);
  t.is((await call(server(), 'GET', '/api/v1/partner/venues', { key: partner.api_key })).status, 401);
  t.is((await call(server(), 'GET', '/api/v1/partner/venues', { key: replaced.json.api_key })).status, 200);

  const expiring = await ops(
    'key:replace',
    '--partner',
    partner.partner_id,
    '--expires-at',
    '2099-01-01T00:00:00+05:30',
  );
  t.is(expiring.code, 0);
  const [row] = await database()
    .db('api_keys')
    .whereNull('revoked_at')
    .where({ partner_id: partner.partner_id });
  t.is(new Date(row.expires_at).toISOString(), '2098-12-31T18:30:00.000Z');

  // An id typed in upper case is the same id, and is written back as the API shows it.
  const revoked = await ops('key:revoke', '--partner', String(partner.partner_id).toUpperCase());
  t.deepEqual(revoked.json, { partner_id: partner.partner_id, revoked: 1 });
  t.is((await call(server(), 'GET', '/api/v1/partner/venues', { key: expiring.json.api_key })).status, 401);
  t.deepEqual((await ops('key:revoke', '--partner', partner.partner_id)).json.revoked, 0);
});

test.serial(
  'venue:create, resource:create, grant, revoke and venue:status shape what discovery shows',
  async (t) => {
    const { json: partner } = await ops('partner:create', '--name', 'Viewer');
    const key = partner.api_key;
    const venue = await ops(
      'venue:create',
      '--name',
      'Kolkata Courts',
      '--address',
      '5 Park St',
      '--city',
      'Kolkata',
    );
    t.deepEqual(Object.keys(venue.json), ['venue_id']);
    const venueId = venue.json.venue_id;
    const [row] = await database().db('venues').where({ id: venueId });
    t.like(row, {
      timezone: 'Asia/Kolkata',
      hold_seconds: 900,
      min_lead_minutes: 0,
      max_advance_days: 21,
      status: 'active',
    });

    const half = (await ops(...pitch(venueId, '--closed-on', 'sun,Monday'))).json.resource_id;
    const other = (await ops(...pitch(venueId))).json.resource_id;
    const full = await ops(
      ...pitch(venueId, '--type', 'full', '--price', '1500', '--parts', `${half},${other}`),
    );
    t.is(full.code, 0);
    t.deepEqual(
      (
        await database().db('resource_parts').where({ resource_id: full.json.resource_id }).pluck('part_id')
      ).sort(),
      [half, other].sort(),
    );

    t.is((await call(server(), 'GET', `/api/v1/partner/venues/${venueId}`, { key })).status, 404);
    const granted = await ops('grant', '--partner', partner.partner_id, '--venue', venueId);
    t.deepEqual(granted.json, { partner_id: partner.partner_id, venue_id: venueId, granted: true });
    const resources = await call(server(), 'GET', `/api/v1/partner/venues/${venueId}/resources`, { key });
    t.is(resources.body.count, 3);
    t.is(resources.body.data[0].closed_on, 'Monday,Sunday');

    for (const days of ['0', '730']) {
      const window = await ops('venue:series-window', '--venue', venueId, '--days', days);
      t.deepEqual(window.json, { venue_id: venueId, series_max_advance_days: Number(days) });
    }

    const paused = await ops('venue:status', '--venue', venueId, '--status', 'paused');
    t.deepEqual(paused.json, { venue_id: venueId, status: 'paused' });
    t.is(
      (await call(server(), 'GET', `/api/v1/partner/venues/${venueId}`, { key })).body.data.status,
      'paused',
    );

    const revoked = await ops('revoke', '--partner', partner.partner_id, '--venue', venueId);
    t.deepEqual(revoked.json, { partner_id: partner.partner_id, venue_id: venueId, granted: false });
    t.is((await call(server(), 'GET', `/api/v1/partner/venues/${venueId}`, { key })).status, 404);
  },
);

test.serial(
  'demo:seed prints {partner_id, api_key, venue_id, resource_ids, package_id} and the key sees the venue',
  async (t) => {
    const seeded = await ops('demo:seed');
    t.deepEqual(Object.keys(seeded.json).sort(), [
      'api_key',
      'package_id',
      'partner_id',
      'resource_ids',
      'venue_id',
    ]);
    t.is(seeded.json.resource_ids.length, 5);
    const res = await call(server(), 'GET', '/api/v1/partner/venues', { key: seeded.json.api_key });
    t.deepEqual(
      res.body.data.map((v: { venue_id: string }) => v.venue_id),
      [seeded.json.venue_id],
    );
    const resources = await call(
      server(),
      'GET',
      `/api/v1/partner/venues/${seeded.json.venue_id}/resources`,
      {
        key: seeded.json.api_key,
      },
    );
    t.deepEqual(
      resources.body.data.map((r: { resource_id: string }) => r.resource_id),
      seeded.json.resource_ids,
    );
  },
);

test.serial(
  'usage errors: unknown command or flag, missing or malformed values — exit non-zero, nothing changed',
  async (t) => {
    const { json: partner } = await ops('partner:create', '--name', 'Existing');
    const { json: venue } = await ops('venue:create', '--name', 'V', '--address', 'A', '--city', 'C');
    const missing = '00000000-0000-4000-8000-000000000000';
    await assertRefused(t, [], /no command given/);
    await assertRefused(t, ['partner:delete'], /unknown command "partner:delete"/);
    // A line break in what the operator typed is written escaped: the reason stays one line.
    await assertRefused(t, ['bo\ngus'], /unknown command "bo\\ngus"/);
    await assertRefused(
      t,
      ['venue:create', '--name', 'V', '--address', 'A', '--city', 'C', '--timezone', 'Asia/Kolk\r\nata'],
      /--timezone: unknown time zone "Asia\/Kolk\\r\\nata"/,
    );
    await assertRefused(t, ['partner:create'], /--name is required/);
    await assertRefused(t, ['partner:create', '--name', 'X', '--colour', 'red'], /Unknown option '--colour'/);
    await assertRefused(t, ['partner:create', '--name', 'X', 'stray'], /positional/);
    await assertRefused(
      t,
      ['partner:create', '--name', 'X', '--rate-limit', '0'],
      /--rate-limit must be at least 1/,
    );
    await assertRefused(
      t,
      ['partner:create', '--name', 'X', '--rate-limit', 'many'],
      /--rate-limit must be a whole number/,
    );
    await assertRefused(
      t,
      ['partner:rate-limit', '--partner', 'nope', '--limit', '5'],
      /--partner must be a uuid/,
    );
    await assertRefused(
      t,
      ['partner:rate-limit', '--partner', missing, '--limit', '5'],
      /no partner with id/,
    );
    await assertRefused(
      t,
      ['key:replace', '--partner', partner.partner_id, '--expires-at', 'tomorrow'],
      /--expires-at/,
    );
    await assertRefused(
      t,
      ['key:replace', '--partner', partner.partner_id, '--expires-at', '2001-01-01T00:00:00Z'],
      /in the future/,
    );
    // Unknown, or known to PostgreSQL only: `localtime` follows the database server's settings,
    // and a partner's Intl refuses it and the `posix/` copies; a name's case is not PostgreSQL's.
    for (const zone of [
      'Mars/Olympus',
      'localtime',
      'posixrules',
      'posix/Asia/Kolkata',
      'Factory',
      'asia/kolkata',
    ]) {
      await assertRefused(
        t,
        ['venue:create', '--name', 'V', '--address', 'A', '--city', 'C', '--timezone', zone],
        /unknown time zone/,
      );
    }
    // A flag given twice names two values: neither wins.
    await assertRefused(
      t,
      ['venue:create', '--name', 'V', '--address', 'A', '--city', 'C', '--name', 'W'],
      /--name given more than once/,
    );
    await assertRefused(
      t,
      ['venue:create', '--name', 'V', '--address', 'A', '--city', 'C', '--hold-seconds', '0'],
      /--hold-seconds/,
    );
    await assertRefused(t, ['venue:status', '--venue', venue.venue_id, '--status', 'closed'], /--status/);
    await assertRefused(t, ['venue:status', '--venue', missing, '--status', 'paused'], /no venue/);
    await assertRefused(t, ['venue:series-window', '--venue', venue.venue_id, '--days', '731'], /--days/);
    await assertRefused(t, ['venue:series-window', '--venue', venue.venue_id, '--days', '-1'], /--days/);
    await assertRefused(t, ['venue:series-window', '--venue', missing, '--days', '30'], /no venue/);
    await assertRefused(t, pitch(missing), /no venue/);
    await assertRefused(t, pitch(venue.venue_id, '--close', '05:00'), /at least one --duration slot/);
    await assertRefused(t, pitch(venue.venue_id, '--close', '25:00'), /--close must be HH:MM/);
    await assertRefused(t, pitch(venue.venue_id, '--closed-on', 'Funday'), /unknown weekday/);
    await assertRefused(t, pitch(venue.venue_id, '--parts', missing), /--parts/);
    await assertRefused(t, ['grant', '--partner', missing, '--venue', venue.venue_id], /no partner/);
    await assertRefused(t, ['grant', '--partner', partner.partner_id, '--venue', missing], /no venue/);
  },
);

test.serial('venue:create takes every flag over its whole range and refuses one step beyond', async (t) => {
  const venue = (...extra: string[]) => [
    'venue:create',
    '--name',
    'V',
    '--address',
    'A',
    '--city',
    'C',
    ...extra,
  ];
  for (const [flag, lowest, highest] of [
    ['--hold-seconds', 1, 86_400],
    ['--min-lead-minutes', 0, 43_200],
    ['--max-advance-days', 0, 730],
  ] as const) {
    for (const value of [lowest, highest]) {
      const created = await ops(...venue(flag, String(value)));
      t.is(created.code, 0, `${flag} ${value}: ${created.stderr}`);
      const column = flag.slice(2).replaceAll('-', '_');
      const row = await database().db('venues').where({ id: created.json.venue_id }).first(column);
      t.is(row[column], value, `${flag} ${value} is stored`);
    }
    await assertRefused(
      t,
      venue(flag, String(highest + 1)),
      new RegExp(`${flag} must be at most ${highest}`),
    );
    if (lowest > 0) {
      await assertRefused(
        t,
        venue(flag, String(lowest - 1)),
        new RegExp(`${flag} must be at least ${lowest}`),
      );
    }
  }
});

test.serial('a convertible resource may only be made of plain resources of the same venue', async (t) => {
  const a = (await ops('venue:create', '--name', 'A', '--address', 'A', '--city', 'C')).json.venue_id;
  const b = (await ops('venue:create', '--name', 'B', '--address', 'B', '--city', 'C')).json.venue_id;
  const partA = (await ops(...pitch(a))).json.resource_id;
  const partB = (await ops(...pitch(b))).json.resource_id;
  await assertRefused(t, pitch(a, '--parts', partB), /not a non-convertible resource of this venue/);
  const whole = (await ops(...pitch(a, '--parts', partA))).json.resource_id;
  await assertRefused(t, pitch(a, '--parts', whole), /not a non-convertible resource/);
});

test.serial('without DATABASE_URL the CLI says so in one line', async (t) => {
  const result = await runOps({ DATABASE_URL: undefined }, 'demo:seed');
  t.is(result.code, 1);
  t.regex(result.stderr, /DATABASE_URL is required/);
});

test.serial(
  'price:add, blackout:add and membership:create store booking rules; bad combinations change nothing',
  async (t) => {
    const { json: venue } = await ops('venue:create', '--name', 'Rules', '--address', 'A', '--city', 'C');
    const half = (await ops(...pitch(venue.venue_id))).json.resource_id;
    const other = (await ops(...pitch(venue.venue_id))).json.resource_id;
    const full = (await ops(...pitch(venue.venue_id, '--parts', `${half},${other}`))).json.resource_id;

    const rule = await ops(
      'price:add',
      '--resource',
      half,
      '--price',
      '900',
      '--days',
      'Sat,sunday',
      '--from',
      '18:00',
      '--to',
      '22:00',
    );
    t.is(rule.code, 0, rule.stderr);
    t.like(await database().db('price_rules').where({ id: rule.json.rule_id }).first(), {
      price_rupees: 900,
      days: [6, 7],
      from_time: '18:00:00',
      to_time: '22:00:00',
      on_date: null,
      specificity: 3,
    });
    t.is((await ops('price:add', '--resource', half, '--price', '700', '--date', '2026-12-25')).code, 0);
    await assertRefused(
      t,
      ['price:add', '--resource', half, '--price', '1', '--from', '10:00'],
      /--from and --to go together/,
    );
    await assertRefused(
      t,
      ['price:add', '--resource', half, '--price', '1', '--from', '10:00', '--to', '09:00'],
      /before --to/,
    );
    await assertRefused(
      t,
      ['price:add', '--resource', half, '--price', '1', '--date', '2026-12-25', '--days', 'Mon'],
      /cannot be combined/,
    );
    await assertRefused(
      t,
      ['price:add', '--resource', half, '--price', '1', '--date', '2026-02-30'],
      /--date must be a date/,
    );

    const blackout = await ops(
      'blackout:add',
      '--venue',
      venue.venue_id,
      '--resource',
      full,
      '--from',
      '2026-12-01T06:00:00+05:30',
      '--to',
      '2026-12-01T12:00:00+05:30',
      '--reason',
      'tournament',
    );
    t.is(blackout.code, 0, blackout.stderr);
    const row = await database().db('blackouts').where({ id: blackout.json.blackout_id }).first();
    t.deepEqual([...row.unit_ids].sort(), [half, other].sort(), "a whole's blackout covers its parts");
    t.is(
      (
        await ops(
          'blackout:add',
          '--venue',
          venue.venue_id,
          '--from',
          '2026-12-02T00:00:00Z',
          '--to',
          '2026-12-03T00:00:00Z',
        )
      ).code,
      0,
    );
    await assertRefused(
      t,
      [
        'blackout:add',
        '--venue',
        venue.venue_id,
        '--from',
        '2026-12-03T00:00:00Z',
        '--to',
        '2026-12-02T00:00:00Z',
      ],
      /before --to/,
    );

    const membership = await ops(
      'membership:create',
      '--venue',
      venue.venue_id,
      '--phone',
      '9876543210',
      '--discount-percent',
      '20',
    );
    t.is(membership.code, 0, membership.stderr);
    t.like(await database().db('memberships').where({ id: membership.json.membership_id }).first(), {
      customer_phone: '+919876543210',
      discount_percent: 20,
      expires_at: null,
    });
    await assertRefused(
      t,
      ['membership:create', '--venue', venue.venue_id, '--phone', '12345', '--discount-percent', '20'],
      /--phone/,
    );
    await assertRefused(
      t,
      ['membership:create', '--venue', venue.venue_id, '--phone', '9876543210', '--discount-percent', '101'],
      /--discount-percent/,
    );
  },
);
