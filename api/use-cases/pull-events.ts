/** The missed-event pull: a page of the events of the caller's venues (CONTRACT.md). */
import type { Knex } from '../../db/postgres/knex.ts';
import * as events from '../../db/queries/events.ts';
import { pageOf } from './page.ts';
import { InvalidFieldError } from '../errors.ts';

/** A page, oldest first, and whether more match after its last event. */
export async function pullEvents(
  db: Knex,
  partnerId: string,
  filters: events.EventPullFilters,
): Promise<{ rows: events.EventRow[]; hasMore: boolean }> {
  let after: { tx: string; seq: string } | undefined;
  if (filters.startingAfter) {
    after = await events.pullPosition(db, partnerId, filters.startingAfter);
    if (!after)
      throw new InvalidFieldError(
        'starting_after',
        'is not an event of a venue granted to you, now or before',
      );
  }
  return pageOf(
    await events.pullEvents(db, partnerId, { ...filters, limit: filters.limit + 1 }, after),
    filters.limit,
  );
}
