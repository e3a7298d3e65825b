/** Reads of one's own series; allowed after a grant is withdrawn (CONTRACT.md). */
import type { Knex } from '../../db/postgres/knex.ts';
import * as series from '../../db/queries/series.ts';
import { NotOwnerError, SeriesNotFoundError } from '../errors.ts';

/** One of the caller's series as it is now: 404 when missing, 403 when another partner's. */
export async function getSeries(db: Knex, partnerId: string, seriesId: string): Promise<series.Series> {
  const found = await series.find(db, seriesId);
  if (!found) throw new SeriesNotFoundError();
  if (found.series.partner_id !== partnerId) throw new NotOwnerError('series');
  return found;
}
