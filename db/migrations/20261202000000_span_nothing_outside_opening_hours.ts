/**
 * `venue_slots()` asked for a window outside a resource's opening hours (a hold at 01:00 where the
 * court opens at 06:00, or at 23:00 after it closed) built the range it reads reservations over
 * from the later of opening and the window's start to the earlier of closing and the window's end:
 * a lower bound above the upper, which PostgreSQL refuses (22000, "range lower bound must be less
 * than or equal to range upper bound"). The hold answered 400 VALIDATION_ERROR with no field, logged
 * as a validation gap. Such a window meets no open hour, so now there is nothing to read: no span,
 * no slot, and the hold is refused as not on the grid (400 SLOT_NOT_AVAILABLE), as the contract says.
 */
import type { Knex } from 'knex';
import { replaceInFunction } from '../postgres/function-definition.ts';

const VENUE_SLOTS = 'venue_slots(uuid, date, uuid, timestamptz, timestamptz)';

const ANY_OPEN = `        from r having count(*) > 0
      ), live as materialized (`;

const OVERLAPPING_OPEN = `        from r having count(*) > 0
           and greatest(min(opens), p_from) <= least(max(closes), p_to)
      ), live as materialized (`;

export async function up(knex: Knex): Promise<void> {
  await replaceInFunction(knex, VENUE_SLOTS, ANY_OPEN, OVERLAPPING_OPEN);
}

export async function down(knex: Knex): Promise<void> {
  await replaceInFunction(knex, VENUE_SLOTS, OVERLAPPING_OPEN, ANY_OPEN);
}
