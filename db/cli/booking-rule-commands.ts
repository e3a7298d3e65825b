/** Booking rules set by operators: price:add, blackout:add, membership:create. */
import * as availabilityChanges from '../queries/availability-changes.ts';
import { z } from 'zod';
import { DateOnly, wholeNumberText } from '../platform/input.ts';
import { Phone } from '../rules/phone.ts';
import { insertBlackout, insertMembership, insertPriceRule } from '../queries/booking-rules.ts';
import * as resources from '../queries/resources.ts';
import * as venues from '../queries/venues.ts';
import {
  CommandError,
  defineCommand,
  id,
  isoDateTime,
  mustExist,
  text,
  timeOfDay,
  weekdays,
} from './command.ts';

export const bookingRuleCommands = [
  defineCommand({
    name: 'price:add',
    usage: '--resource RID --price RUPEES [--days Sat,Sun] [--from HH:MM --to HH:MM] [--date YYYY-MM-DD]',
    flags: z.strictObject({
      resource: id,
      price: wholeNumberText(0, 10_000_000),
      days: weekdays.optional(),
      from: timeOfDay.optional(),
      to: timeOfDay.optional(),
      date: DateOnly.optional(),
    }),
    async run(trx, flags) {
      mustExist(
        Boolean(await trx('resources').where({ id: flags.resource }).first('id')),
        'resource',
        flags.resource,
      );
      if ((flags.from === undefined) !== (flags.to === undefined))
        throw new CommandError('--from and --to go together');
      if (flags.from && flags.to && flags.from >= flags.to)
        throw new CommandError('--from must be before --to');
      if (flags.date && flags.days) throw new CommandError('--date and --days cannot be combined');
      const ruleId = await insertPriceRule(trx, {
        resourceId: flags.resource,
        priceRupees: flags.price,
        days: flags.days ?? null,
        fromTime: flags.from ?? null,
        toTime: flags.to ?? null,
        onDate: flags.date ?? null,
      });
      const { rows } = await trx.raw<{ rows: { venue_id: string }[] }>(
        'select venue_id from resources where id = ?',
        [flags.resource],
      );
      await availabilityChanges.recordRange(trx, {
        venueId: rows[0]!.venue_id,
        resourceId: flags.resource,
        from: flags.date ?? null,
        to: flags.date ?? null,
        reason: 'price_rule',
      });
      return { rule_id: ruleId };
    },
  }),
  defineCommand({
    name: 'blackout:add',
    usage: '--venue ID [--resource RID] --from ISO --to ISO [--reason S]',
    flags: z.strictObject({
      venue: id,
      resource: id.optional(),
      from: isoDateTime,
      to: isoDateTime,
      reason: text(500).optional(),
    }),
    async run(trx, flags) {
      mustExist(await venues.exists(trx, flags.venue), 'venue', flags.venue);
      if (flags.from >= flags.to) throw new CommandError('--from must be before --to');
      let unitIds: string[] | null = null;
      if (flags.resource) {
        const resource = await resources.findOfVenue(trx, flags.venue, flags.resource);
        if (!resource)
          throw new CommandError(`--resource: ${flags.resource} is not a resource of this venue`);
        unitIds = await resources.unitsOf(trx, resource.id);
      }
      const blackoutId = await insertBlackout(trx, {
        venueId: flags.venue,
        resourceId: flags.resource ?? null,
        unitIds,
        from: flags.from,
        to: flags.to,
        reason: flags.reason ?? null,
      });
      await availabilityChanges.recordBlackoutRange(trx, {
        venueId: flags.venue,
        resourceId: flags.resource ?? null,
        from: flags.from,
        to: flags.to,
      });
      return { blackout_id: blackoutId };
    },
  }),
  defineCommand({
    name: 'membership:create',
    usage: '--venue ID --phone PHONE --discount-percent N [--expires-at ISO]',
    flags: z.strictObject({
      venue: id,
      phone: Phone,
      'discount-percent': wholeNumberText(1, 100),
      'expires-at': isoDateTime.optional(),
    }),
    async run(trx, flags) {
      mustExist(await venues.exists(trx, flags.venue), 'venue', flags.venue);
      const membershipId = await insertMembership(trx, {
        venueId: flags.venue,
        customerPhone: flags.phone,
        discountPercent: flags['discount-percent'],
        expiresAt: flags['expires-at'] ?? null,
      });
      return { membership_id: membershipId };
    },
  }),
];
