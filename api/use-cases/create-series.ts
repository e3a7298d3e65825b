/**
 * POST /bookings/series: one statement, `place_series()` (db/queries/series.ts), which checks the
 * venue and the resource, claims the idempotency key, judges every occurrence under the locks of
 * every holdable window (the judgement the preview makes) and holds the held occurrences as one hold
 * group naming the series, or raises a refusal, leaving nothing behind. As for a hold group
 * (create-hold-group.ts): holds past their expiry in the way are expired and the statement runs
 * again; transient conflicts are retried; a free window is never refused.
 */
import type { PgBoss } from 'pg-boss';
import type { Knex } from '../../db/postgres/knex.ts';
import { EXCLUSION_VIOLATION, isPgError, refusalOf } from '../../db/postgres/pg-errors.ts';
import { RaceLost, retryLostRaces } from '../../db/postgres/transaction.ts';
import * as series from '../../db/queries/series.ts';
import { ServiceUnavailableError } from '../errors.ts';
import {
  databaseWriteOutcome,
  fingerprint,
  type IdempotentWrite,
  type WriteOutcome,
} from '../idempotency.ts';
import { expireOverdueHolds } from './create-hold.ts';
import { itemsRefused } from './item-refusals.ts';
import { patternRefused } from './preview-series.ts';

/** A series, as the partner asked for it (the body checked; the phone in +91XXXXXXXXXX form). */
export interface SeriesRequest {
  pattern: series.Pattern;
  onConflict: 'reject' | 'skip';
  minOccurrences: number;
  idempotencyKey: string;
  /** What the key compares (`sentRequest()` of the body as sent and as parsed). */
  compared: Pick<IdempotentWrite, 'request' | 'earlierRequest'>;
}

/**
 * Holds a series for `partnerId`, or replays the series placed with the same key and request: either
 * way the series as it was placed.
 */
export async function createSeries(
  deps: { db: Knex; boss: PgBoss },
  partnerId: string,
  input: SeriesRequest,
): Promise<WriteOutcome<series.Series>> {
  const write: IdempotentWrite = {
    partnerId,
    key: input.idempotencyKey,
    operation: 'series',
    ...input.compared,
  };
  try {
    return await retryLostRaces(async () => {
      try {
        const outcome = await series.place(deps.db, {
          ...input.pattern,
          partnerId,
          idempotencyKey: input.idempotencyKey,
          fingerprint: fingerprint(write.request),
          onConflict: input.onConflict,
          minOccurrences: input.minOccurrences,
        });
        return databaseWriteOutcome(outcome, write, series.seriesFromJson);
      } catch (err) {
        const refusal = refusalOf(err);
        if (refusal?.reason === 'overdue') {
          await expireOverdueHolds(deps, refusal.detail!.split(','));
          throw new RaceLost('an overdue hold was in the way', { cause: err });
        }
        if (refusal?.reason === 'occurrences_refused') {
          throw itemsRefused(
            'occurrences',
            (JSON.parse(refusal.detail!) as { occurrence: number; reason: string; local_date: string }[]).map(
              (o) => ({ index: o.occurrence, reason: o.reason, local_date: o.local_date }),
            ),
          );
        }
        const refused = patternRefused(err);
        if (refused) throw refused;
        if (refusal)
          throw new Error(`place_series refused for an unknown reason: ${refusal.reason}`, { cause: err });
        // Every writer of reservations locks its windows before reading them; should the constraint
        // fire anyway, run again: the overlap read then names what is live.
        if (isPgError(err, EXCLUSION_VIOLATION)) throw new RaceLost('an exclusion violation', { cause: err });
        throw err;
      }
    });
  } catch (err) {
    if (isPgError(err, EXCLUSION_VIOLATION) || refusalOf(err)?.reason === 'overdue') {
      throw new ServiceUnavailableError();
    }
    throw err;
  }
}
