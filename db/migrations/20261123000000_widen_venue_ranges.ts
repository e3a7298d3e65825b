/**
 * The ranges CONTRACT.md gives `venue:create`: holds of 1 second to a day (short holds let
 * partners and tests see expiry in seconds) and a booking window of up to 730 days.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    alter table venues drop constraint venues_hold_seconds_check,
      add constraint venues_hold_seconds_check check (hold_seconds between 1 and 86400);
    alter table venues drop constraint venues_max_advance_days_check,
      add constraint venues_max_advance_days_check check (max_advance_days between 0 and 730);
  `);
}

export async function down(knex: Knex): Promise<void> {
  // Rows outside the old ranges are brought inside them, so the old constraints can hold again.
  await knex.raw(`
    update venues set hold_seconds = greatest(hold_seconds, 30), max_advance_days = least(max_advance_days, 366);
    alter table venues drop constraint venues_hold_seconds_check,
      add constraint venues_hold_seconds_check check (hold_seconds between 30 and 86400);
    alter table venues drop constraint venues_max_advance_days_check,
      add constraint venues_max_advance_days_check check (max_advance_days between 0 and 366);
  `);
}
