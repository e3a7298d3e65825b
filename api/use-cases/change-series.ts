/**
 * "This and following": POST /bookings/series/{seriesId}/cancel and /refund act, in one
 * transaction, on every occurrence from `from_occurrence_index` on whose window starts after now,
 * each exactly as the booking's own cancel or refund would (change-booking.ts): cancel turns each
 * BOOKED booking CANCELLED; refund turns each BOOKED or CANCELLED one REFUNDED; leaving BOOKED frees
 * the window (one waitlist promotion job for all of them) and gives back a package credit that
 * paid. Each changed booking gets its event, recorded as one set. Occurrences before the index, or
 * already started, are never touched. Checks, in the contract's order: the series exists, is the
 * caller's, is at a venue still the caller's; `from_occurrence_index` is below its count; the
 * idempotency key; then whether anything would change (INVALID_HOLD_STATE when nothing would).
 */
import type { PgBoss } from 'pg-boss';
import { recordBookingEvents } from '../../db/rules/events.ts';
import { freeWindows } from '../../db/rules/free-window.ts';
import type { Knex } from '../../db/postgres/knex.ts';
import { transaction } from '../../db/postgres/transaction.ts';
import * as bookings from '../../db/queries/bookings.ts';
import * as purchases from '../../db/queries/package-purchases.ts';
import * as series from '../../db/queries/series.ts';
import { InvalidFieldError, InvalidHoldStateError } from '../errors.ts';
import { sentRequest, withIdempotency, type IdempotentWrite, type WriteOutcome } from '../idempotency.ts';
import { lockOwnSeries } from './own-records.ts';

/** A change of a series from an occurrence on, as the partner asked for it. */
export interface SeriesChangeRequest {
  idempotency_key: string;
  reason?: string | undefined;
  from_occurrence_index: number;
}

type Deps = { db: Knex; boss: PgBoss };

/**
 * Cancels the caller's series from an occurrence on, or replays the cancel made with the same key,
 * series and body (`sent`, as the client sent it).
 */
export function cancelSeries(
  deps: Deps,
  partnerId: string,
  seriesId: string,
  input: SeriesChangeRequest,
  sent: unknown,
): Promise<WriteOutcome<series.ChangedSeries>> {
  return changeSeries(deps, partnerId, seriesId, input, sent, 'series_cancel');
}

/** Refunds the caller's series from an occurrence on, or replays the refund made as `cancelSeries` says. */
export function refundSeries(
  deps: Deps,
  partnerId: string,
  seriesId: string,
  input: SeriesChangeRequest,
  sent: unknown,
): Promise<WriteOutcome<series.ChangedSeries>> {
  return changeSeries(deps, partnerId, seriesId, input, sent, 'series_refund');
}

function changeSeries(
  { db, boss }: Deps,
  partnerId: string,
  seriesId: string,
  input: SeriesChangeRequest,
  sent: unknown,
  operation: 'series_cancel' | 'series_refund',
): Promise<WriteOutcome<series.ChangedSeries>> {
  const key = input.idempotency_key;
  const write: IdempotentWrite = { partnerId, key, operation, ...sentRequest(sent, input, { seriesId }) };
  const cancel = operation === 'series_cancel';
  return transaction(db, async (trx) => {
    const locked = await lockOwnSeries(trx, partnerId, seriesId);
    if (input.from_occurrence_index >= locked.count) {
      throw new InvalidFieldError(
        'from_occurrence_index',
        `must be an occurrence of the series: 0 to ${locked.count - 1}`,
      );
    }
    return withIdempotency(
      trx,
      write,
      async () => {
        const candidates = await series.changeableBookings(trx, locked.id, input.from_occurrence_index);
        const targets = candidates.filter((b) => (cancel ? b.status === 'BOOKED' : b.status !== 'REFUNDED'));
        if (targets.length === 0) {
          throw new InvalidHoldStateError(
            cancel
              ? 'No occurrence from that index on is BOOKED and yet to start: nothing to cancel.'
              : 'No occurrence from that index on is BOOKED or CANCELLED and yet to start: nothing to refund.',
          );
        }
        const reason = input.reason ?? null;
        for (const booking of targets) {
          if (cancel) await bookings.cancel(trx, booking.id, reason);
          else await bookings.refund(trx, booking.id, reason);
        }
        const eventIds = await recordBookingEvents(
          trx,
          cancel ? 'booking_cancelled' : 'booking_refunded',
          targets.map((b) => b.id),
        );
        // What leaving BOOKED undoes: the window is freed, and a package credit that paid comes back.
        const left = targets
          .map((b, i) => ({ booking: b, eventId: eventIds[i]! }))
          .filter((t) => t.booking.status === 'BOOKED');
        await freeWindows(
          trx,
          boss,
          left.map((t) => t.booking.hold_id),
          left.map((t) => t.eventId),
        );
        for (const { booking } of left) {
          if (booking.package_purchase_id) await purchases.returnCredit(trx, booking.package_purchase_id);
        }
        const changed = (await series.find(trx, locked.id))!;
        return { ...changed, changed: targets.map((b) => b.occurrence_index) };
      },
      series.changedSeriesFromJson,
    );
  });
}
