/**
 * The membership discount a hold's price includes (0 when none). A confirm of a discounted hold
 * must carry the customer whose membership priced it (CONTRACT.md, "Hardening answers"), so the
 * hold remembers that its price was a member's.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    alter table holds add column discount_percent integer not null default 0
      check (discount_percent between 0 and 100)
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('alter table holds drop column discount_percent');
}
