/**
 * The change log's last position is kept by the sequencer that hands positions out, not read back
 * from the rows: retention deletes rows, and once it had deleted the newest ones (every one, on a
 * quiet service) the log's position went back, even to 0. Cursors already issued were then refused
 * as past the log's end, and a snapshot's `changes_cursor` named a place every venue's cursor had
 * expired at, so a partner that fetched the snapshot again, as the 410 tells it to, got 410 again.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    alter table availability_change_sequencer add column last_position bigint not null default 0;
    update availability_change_sequencer
       set last_position = greatest(
             coalesce((select max(c.position) from availability_changes c), 0),
             coalesce((select max(p.through_position) from availability_change_purges p), 0));
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('alter table availability_change_sequencer drop column last_position');
}
