/**
 * Venues, their resources and catalogue, and who may see them: venue:create, venue:list, venue:status,
 * venue:series-window, resource:create, package:create, grant, revoke.
 */
import { z } from 'zod';
import { wholeNumberText } from '../platform/input.ts';
import type { Knex } from '../postgres/knex.ts';
import * as availabilityChanges from '../queries/availability-changes.ts';
import * as packages from '../queries/packages.ts';
import * as partners from '../queries/partners.ts';
import * as resources from '../queries/resources.ts';
import * as grants from '../queries/venue-grants.ts';
import * as venues from '../queries/venues.ts';
import { CommandError, defineCommand, id, idList, mustExist, text, timeOfDay, weekdays } from './command.ts';

/**
 * Whether the time zone is one PostgreSQL (which computes every venue-local time) knows by that
 * exact name and one partners can use too: the API shows it, and a partner's Intl (ICU) refuses
 * PostgreSQL's own extras (`localtime` and `posixrules`, which follow the database server's
 * settings, `Factory`, the `posix/` copies).
 */
async function isKnownTimeZone(trx: Knex, name: string): Promise<boolean> {
  try {
    new Intl.DateTimeFormat('en', { timeZone: name });
  } catch {
    return false;
  }
  return Boolean(await trx('pg_timezone_names').where({ name }).first('name'));
}

function minutesOf(hhmm: string): number {
  const [h, m] = hhmm.split(':').map(Number);
  return h! * 60 + m!;
}

export const venueCommands = [
  defineCommand({
    name: 'venue:create',
    usage:
      '--name S --address S --city S [--timezone Asia/Kolkata] [--hold-seconds 900] [--min-lead-minutes 0] [--max-advance-days 21]',
    flags: z.strictObject({
      name: text(200),
      address: text(500),
      city: text(200),
      timezone: text(100).default('Asia/Kolkata'),
      'hold-seconds': wholeNumberText(1, 86_400).default(900),
      'min-lead-minutes': wholeNumberText(0, 43_200).default(0),
      'max-advance-days': wholeNumberText(0, 730).default(21),
    }),
    async run(trx, flags) {
      if (!(await isKnownTimeZone(trx, flags.timezone))) {
        throw new CommandError(`--timezone: unknown time zone "${flags.timezone}"`);
      }
      const venueId = await venues.insert(trx, {
        name: flags.name,
        address: flags.address,
        city: flags.city,
        timezone: flags.timezone,
        holdSeconds: flags['hold-seconds'],
        minLeadMinutes: flags['min-lead-minutes'],
        maxAdvanceDays: flags['max-advance-days'],
      });
      return { venue_id: venueId };
    },
  }),
  defineCommand({
    name: 'venue:list',
    usage: '[--partner ID]',
    flags: z.strictObject({ partner: id.optional() }),
    async run(trx, flags) {
      if (flags.partner) mustExist(await partners.exists(trx, flags.partner), 'partner', flags.partner);
      return { venues: await venues.listForOperator(trx, flags.partner) };
    },
  }),
  defineCommand({
    name: 'venue:status',
    usage: '--venue ID --status active|paused|archived',
    flags: z.strictObject({ venue: id, status: z.enum(venues.VENUE_STATUSES) }),
    async run(trx, flags) {
      mustExist(await venues.setStatus(trx, flags.venue, flags.status), 'venue', flags.venue);
      await availabilityChanges.recordRange(trx, {
        venueId: flags.venue,
        resourceId: null,
        from: null,
        to: null,
        reason: 'venue_status',
      });
      return { venue_id: flags.venue, status: flags.status };
    },
  }),
  defineCommand({
    name: 'venue:series-window',
    usage: '--venue ID --days N',
    flags: z.strictObject({ venue: id, days: wholeNumberText(0, 730) }),
    async run(trx, flags) {
      mustExist(await venues.setSeriesWindow(trx, flags.venue, flags.days), 'venue', flags.venue);
      return { venue_id: flags.venue, series_max_advance_days: flags.days };
    },
  }),
  defineCommand({
    name: 'resource:create',
    usage:
      '--venue ID --type S --sport S --duration MIN --price RUPEES --open HH:MM --close HH:MM [--closed-on Monday,Sunday] [--parts RID,RID]',
    flags: z.strictObject({
      venue: id,
      type: text(100),
      sport: text(100),
      duration: wholeNumberText(15, 1440),
      price: wholeNumberText(0, 10_000_000),
      open: timeOfDay,
      close: timeOfDay,
      'closed-on': weekdays.optional(),
      parts: idList.optional(),
    }),
    async run(trx, flags) {
      mustExist(await venues.exists(trx, flags.venue), 'venue', flags.venue);
      const openMinutes = minutesOf(flags.close) - minutesOf(flags.open);
      if (openMinutes < flags.duration) {
        throw new CommandError('--open/--close must span at least one --duration slot');
      }
      const parts = flags.parts ?? [];
      const plainParts = await resources.findPlainOfVenue(trx, flags.venue, parts);
      const bad = parts.filter((p) => !plainParts.includes(p));
      if (bad.length) {
        throw new CommandError(`--parts: ${bad.join(',')} not a non-convertible resource of this venue`);
      }
      const resourceId = await resources.insert(trx, {
        venueId: flags.venue,
        resourceType: flags.type,
        sportCategory: flags.sport,
        durationMinutes: flags.duration,
        priceRupees: flags.price,
        opensAt: flags.open,
        closesAt: flags.close,
        closedOn: flags['closed-on'] ?? [],
        parts,
      });
      await availabilityChanges.recordRange(trx, {
        venueId: flags.venue,
        resourceId,
        from: null,
        to: null,
        reason: 'resource',
      });
      return { resource_id: resourceId };
    },
  }),
  defineCommand({
    name: 'package:create',
    usage: '--venue ID --name S --credits N --price RUPEES --valid-days N',
    flags: z.strictObject({
      venue: id,
      name: text(200),
      credits: wholeNumberText(1, 1000),
      price: wholeNumberText(0, 10_000_000),
      'valid-days': wholeNumberText(1, 3660),
    }),
    async run(trx, flags) {
      mustExist(await venues.exists(trx, flags.venue), 'venue', flags.venue);
      const packageId = await packages.insert(trx, {
        venueId: flags.venue,
        name: flags.name,
        credits: flags.credits,
        priceRupees: flags.price,
        validDays: flags['valid-days'],
      });
      return { package_id: packageId };
    },
  }),
  defineCommand({
    name: 'grant',
    usage: '--partner ID --venue ID',
    flags: z.strictObject({ partner: id, venue: id }),
    async run(trx, flags) {
      await mustBeKnown(trx, flags.partner, flags.venue);
      await grants.grant(trx, flags.partner, flags.venue);
      return { partner_id: flags.partner, venue_id: flags.venue, granted: true };
    },
  }),
  defineCommand({
    name: 'revoke',
    usage: '--partner ID --venue ID',
    flags: z.strictObject({ partner: id, venue: id }),
    async run(trx, flags) {
      await mustBeKnown(trx, flags.partner, flags.venue);
      await grants.revoke(trx, flags.partner, flags.venue);
      return { partner_id: flags.partner, venue_id: flags.venue, granted: false };
    },
  }),
];

async function mustBeKnown(trx: Knex, partnerId: string, venueId: string): Promise<void> {
  mustExist(await partners.exists(trx, partnerId), 'partner', partnerId);
  mustExist(await venues.exists(trx, venueId), 'venue', venueId);
}
