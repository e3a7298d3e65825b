/**
 * An attempt's row is written twice: inserted when it is claimed, updated with its outcome when it
 * ends (status code or error, finished_at), a few milliseconds later. None of those columns is
 * indexed, so the update can stay on the row's page (a heap-only tuple, no new index entries), but
 * only if the page has room: at the default fillfactor the pages fill with newer claims first, and
 * the shared load harness's fan-out found two thirds of outcome updates moving to another page,
 * each adding an entry to all three of the table's indexes (n_tup_hot_upd 12,240 of 36,120). With
 * half of each page kept free, 97% stayed (32,062 of 33,120); with a fifth, 52%, since the old
 * versions of earlier outcomes are not pruned soon enough to make room (docs/BENCHMARKS.md). The
 * table takes more pages for it; its rows go when their delivery does (retention).
 *
 * Only pages written from now on keep the room; existing ones are not rewritten.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw('alter table webhook_attempts set (fillfactor = 50)');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('alter table webhook_attempts reset (fillfactor)');
}
