/**
 * POST /bookings/series/preview: one statement, `preview_series()` (db/queries/series.ts), which
 * checks the venue and the resource and judges every occurrence as a creation would
 * (judge_series(), without locking), pricing the holdable ones. Nothing is held or stored: like
 * availability, a hint.
 */
import type { Knex } from '../../db/postgres/knex.ts';
import { refusalOf } from '../../db/postgres/pg-errors.ts';
import * as series from '../../db/queries/series.ts';
import { InvalidFieldError, VenueNotAuthorizedError } from '../errors.ts';

/** A pattern's preview: the venue's zone and every occurrence, judged now. */
export interface SeriesPreview {
  venueId: string;
  resourceId: string;
  timezone: string;
  occurrences: series.PreviewedOccurrence[];
}

/** Judges a pattern for `partnerId` without holding anything. */
export async function previewSeries(
  db: Knex,
  partnerId: string,
  pattern: series.Pattern,
): Promise<SeriesPreview> {
  try {
    const { timezone, occurrences } = await series.preview(db, partnerId, pattern);
    return { venueId: pattern.venueId, resourceId: pattern.resourceId, timezone, occurrences };
  } catch (err) {
    throw patternRefused(err) ?? err;
  }
}

/** The API's error for a refusal of a pattern's venue or resource (preview and create alike). */
export function patternRefused(err: unknown): Error | undefined {
  switch (refusalOf(err)?.reason) {
    case 'venue_not_authorized':
      return new VenueNotAuthorizedError();
    case 'unknown_resource':
      return new InvalidFieldError('resource_id', 'is not a resource of this venue (copy it from discovery)');
    default:
      return undefined;
  }
}
