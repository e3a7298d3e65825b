/** Queries on `webhook_deliveries` and `webhook_attempts`. */
import { traceSetting } from '../platform/tracing.ts';
import type { Knex } from '../postgres/knex.ts';
import type { EventRow } from './events.ts';

export type DeliveryStatus = 'pending' | 'failed' | 'delivered' | 'dead_letter';

/** A row of `webhook_deliveries`. */
export interface DeliveryRow {
  id: string;
  event_id: string;
  subscription_id: string;
  partner_id: string;
  status: DeliveryStatus;
  attempts: number;
  last_attempt_id: string | null;
  /** The attempt scheduled next, named before it runs; null while one is in flight or none is due. */
  next_attempt_id: string | null;
  last_status_code: number | null;
  last_error: string | null;
  next_attempt_at: Date | null;
  created_at: Date;
  last_attempt_at: Date | null;
  delivered_at: Date | null;
}

/**
 * Publishes events: one delivery per active subscription that lists the event's type, of every
 * partner granted the event's venue, each with its first attempt named and queued, in `trx`
 * (`publish_event()` in SQL, which the hold and confirm functions call themselves). Publishing an
 * event twice creates nothing twice.
 */
export async function publish(trx: Knex, eventIds: readonly string[]): Promise<void> {
  if (eventIds.length === 0) return;
  // The trace of the request or job publishing them goes into the delivery jobs (tracing.ts).
  await trx.raw('select publish_event(id, ?::text) from unnest(?::uuid[]) as id', [
    traceSetting(),
    [...eventIds],
  ]);
}

/** What an attempt needs: the delivery, its event and where and with which secret to send it. */
export interface AttemptPlan {
  delivery: DeliveryRow;
  /** The attempt's id: the `delivery_id` the partner sees. */
  attemptId: string;
  event: EventRow;
  endpointUrl: string;
  secretKey: string;
}

/**
 * Starts attempt `attemptId` of a delivery, if that is the attempt due now: it is the named next
 * attempt, its time has come, and fewer than `maxAttempts` were made. Counting it, recording its
 * start and clearing the name happen in one statement, committed before anything is sent, so the
 * attempt runs at most once and one cut short by a crash still counts. `attemptId` undefined is a
 * job queued before attempts had ids: it may start an attempt that was never named (a fresh id
 * then), never a named one. Undefined when this call started nothing.
 */
export async function claimAttempt(
  db: Knex,
  deliveryId: string,
  attemptId: string | undefined,
  maxAttempts: number,
): Promise<AttemptPlan | undefined> {
  const { rows } = await db.raw<{
    rows: (DeliveryRow & { event: EventRow; endpoint_url: string; secret_key: string })[];
  }>(
    `with d as (
       update webhook_deliveries
          set attempts = attempts + 1, last_attempt_id = coalesce(next_attempt_id, gen_random_uuid()),
              last_attempt_at = now(), status = 'pending', next_attempt_id = null, next_attempt_at = null
        where id = ? and status in ('pending', 'failed') and attempts < ?
          and coalesce(next_attempt_at, '-infinity') <= now()
          and case when ?::uuid is null
                   then next_attempt_id is null and (status = 'failed' or attempts = 0)
                   else next_attempt_id = ? end
        returning *
     ), a as (
       insert into webhook_attempts (id, delivery_id, attempt, started_at)
       select d.last_attempt_id, d.id, d.attempts, now() from d
     )
     select d.*, to_jsonb(e) as event, s.endpoint_url, s.secret_key
       from d join events e on e.id = d.event_id join webhook_subscriptions s on s.id = d.subscription_id`,
    [deliveryId, maxAttempts, attemptId ?? null, attemptId ?? null],
  );
  const row = rows[0];
  if (!row) return undefined;
  const { event, endpoint_url, secret_key, ...delivery } = row;
  return {
    delivery,
    attemptId: delivery.last_attempt_id!,
    event: { ...event, occurred_at: new Date(event.occurred_at) },
    endpointUrl: endpoint_url,
    secretKey: secret_key,
  };
}

/** Where a delivery stands, for a job that could not start its attempt. */
export interface AttemptState {
  status: DeliveryStatus;
  attempts: number;
  next_attempt_id: string | null;
  next_attempt_at: Date | null;
  last_attempt_id: string | null;
  /** An attempt has started and not finished: status pending, nothing named next, attempts made. */
  in_flight: boolean;
  /** The next attempt's time has come. */
  due: boolean;
  /** The attempt in flight started longer ago than `leaseSeconds`: its worker is presumed dead. */
  lease_passed: boolean;
}

/** Reads where a delivery stands on the database clock; undefined when it does not exist. */
export async function attemptState(
  db: Knex,
  deliveryId: string,
  leaseSeconds: number,
): Promise<AttemptState | undefined> {
  const { rows } = await db.raw<{ rows: AttemptState[] }>(
    `select status, attempts, next_attempt_id, next_attempt_at, last_attempt_id,
            status = 'pending' and next_attempt_id is null and attempts > 0 as in_flight,
            coalesce(next_attempt_at, '-infinity') <= now() as due,
            coalesce(last_attempt_at + make_interval(secs => ?) <= now(), false) as lease_passed
       from webhook_deliveries where id = ?`,
    [leaseSeconds, deliveryId],
  );
  return rows[0];
}

/** The outcome of one attempt. */
export interface AttemptOutcome {
  ok: boolean;
  statusCode: number | null;
  error: string | null;
}

/** What finishing an attempt records. */
export interface FinishedAttempt {
  deliveryId: string;
  attemptId: string;
  outcome: AttemptOutcome;
  /** The attempt to schedule after a failure, or null: none (delivered, or the last one failed). */
  next: { attemptId: string; afterSeconds: number } | null;
  /**
   * Set when a job other than the attempt's own declares it abandoned: recorded only if the attempt
   * started more than this many seconds ago (its lease passed) and is still in flight.
   */
  abandonedAfterSeconds?: number;
}

/**
 * Records an attempt's outcome on its delivery: delivered; or failed with the named next attempt
 * `afterSeconds` from now; or, with none, dead-lettered. Only the attempt in flight may record,
 * so a stale one changes nothing, with one exception: a success of an attempt that was declared
 * abandoned (its worker was slow, not dead) still marks the delivery delivered, since the partner
 * has the event and a dead letter or a further attempt would say otherwise. The attempt's own row
 * takes the outcome its worker saw. True if the delivery changed.
 */
export async function finishAttempt(trx: Knex, f: FinishedAttempt): Promise<boolean> {
  const { ok, statusCode, error } = f.outcome;
  const status: DeliveryStatus = ok ? 'delivered' : f.next ? 'failed' : 'dead_letter';
  const abandoned = f.abandonedAfterSeconds !== undefined;
  // Delivery row first, then the attempt row, in every transaction that writes both: one order,
  // so a late finish and a takeover of the same attempt cannot deadlock.
  const changed = await trx.raw<{ rowCount: number }>(
    `update webhook_deliveries
        set status = ?, last_status_code = ?, last_error = ?, next_attempt_id = ?::uuid,
            next_attempt_at = now() + make_interval(secs => ?::double precision),
            delivered_at = case when ?::boolean then now() end
      where id = ? and last_attempt_id = ?
        and ((status = 'pending' and next_attempt_id is null
              and (?::double precision is null or last_attempt_at + make_interval(secs => ?) <= now()))
             or (?::boolean and status in ('failed', 'dead_letter')))`,
    [
      status,
      statusCode,
      error,
      f.next?.attemptId ?? null,
      f.next?.afterSeconds ?? null,
      ok,
      f.deliveryId,
      f.attemptId,
      f.abandonedAfterSeconds ?? null,
      f.abandonedAfterSeconds ?? 0,
      ok,
    ],
  );
  const recorded = changed.rowCount > 0;
  if (recorded || !abandoned) {
    await trx('webhook_attempts')
      .where({ id: f.attemptId })
      .modify((q) => {
        if (abandoned) q.whereNull('finished_at');
      })
      .update({ status_code: statusCode, error, finished_at: trx.fn.now() });
  }
  return recorded;
}

/**
 * The time attempt `attemptId` is due, if it is still the named next attempt and that time has not
 * come; the row is locked, so nothing changes the attempt before the caller commits. Undefined
 * otherwise.
 */
export async function lockEarlyAttempt(
  trx: Knex,
  deliveryId: string,
  attemptId: string,
): Promise<Date | undefined> {
  const { rows } = await trx.raw<{ rows: { next_attempt_at: Date }[] }>(
    `select next_attempt_at from webhook_deliveries
      where id = ? and next_attempt_id = ? and status in ('pending', 'failed') and next_attempt_at > now()
      for update`,
    [deliveryId, attemptId],
  );
  return rows[0]?.next_attempt_at;
}

/** Counts of a partner's deliveries by status. */
export async function countByStatus(db: Knex, partnerId: string): Promise<Record<DeliveryStatus, number>> {
  const rows = await db('webhook_deliveries')
    .where({ partner_id: partnerId })
    .groupBy('status')
    .select('status')
    .count({ n: '*' });
  const counts: Record<DeliveryStatus, number> = { pending: 0, failed: 0, delivered: 0, dead_letter: 0 };
  for (const row of rows as { status: DeliveryStatus; n: number | string }[])
    counts[row.status] = Number(row.n);
  return counts;
}

/** A dead-lettered delivery with its event type, for observability. */
export interface DeadLetterRow extends DeliveryRow {
  event_type: string;
}

/** A partner's dead letters, most recent attempt first. */
export function listDeadLetters(db: Knex, partnerId: string, limit: number): Promise<DeadLetterRow[]> {
  return db({ d: 'webhook_deliveries' })
    .join({ e: 'events' }, 'e.id', 'd.event_id')
    .where({ 'd.partner_id': partnerId, 'd.status': 'dead_letter' })
    .orderBy([
      { column: 'd.last_attempt_at', order: 'desc' },
      { column: 'd.id', order: 'desc' },
    ])
    .limit(limit)
    .select('d.*', 'e.event_type');
}

/** Finds a partner's delivery by the id of any of its attempts, locked. */
export async function lockByAttemptId(
  trx: Knex,
  partnerId: string,
  attemptId: string,
): Promise<DeliveryRow | undefined> {
  const { rows } = await trx.raw<{ rows: DeliveryRow[] }>(
    `select d.* from webhook_deliveries d join webhook_attempts a on a.delivery_id = d.id
      where a.id = ? and d.partner_id = ? for update of d`,
    [attemptId, partnerId],
  );
  return rows[0];
}

/**
 * Puts a dead letter back in line and queues its first attempt, in the caller's transaction: the
 * API's redeliver and the operator's `deliveries:redeliver` both come here. Attempts are counted
 * afresh and the first one is named anew and due now, so no job of the earlier round (each names
 * an attempt of that round) can run it; the event and its id stay. The job goes out as
 * `publish_event()` sends first attempts, through `queue_delivery_attempt()`, with the trace of the
 * request in scope.
 */
export async function requeue(trx: Knex, deliveryId: string): Promise<DeliveryRow> {
  const [row] = await trx<DeliveryRow>('webhook_deliveries')
    .where({ id: deliveryId, status: 'dead_letter' })
    .update({
      status: 'pending',
      attempts: 0,
      next_attempt_id: trx.raw('gen_random_uuid()'),
      next_attempt_at: trx.fn.now(),
      delivered_at: null,
    })
    .returning('*');
  const requeued = row as DeliveryRow;
  // The job continues the trace of the request redelivering (job_trace() reads the transaction's
  // booking.trace; tracing.ts). The operator's CLI has none.
  const trace = traceSetting();
  if (trace !== null) await trx.raw("select set_config('booking.trace', ?, true)", [trace]);
  await trx.raw('select queue_delivery_attempt(?, ?)', [requeued.id, requeued.next_attempt_id]);
  return requeued;
}

/** A delivery as the operator CLI lists it. */
export interface DeliveryListing {
  /** The id `deliveries:redeliver --delivery` takes: its latest attempt's, or the next one named. */
  delivery_id: string;
  event_id: string;
  event_type: string;
  subscription_id: string;
  partner_id: string;
  status: string;
  attempts: number;
  last_status_code: number | null;
  last_error: string | null;
  created_at: Date;
  last_attempt_at: Date | null;
}

/** The newest deliveries first, of one partner and in one status when asked. */
export async function listForOperator(
  db: Knex,
  filters: { partnerId?: string | undefined; status?: string | undefined; limit: number },
): Promise<DeliveryListing[]> {
  const { rows } = await db.raw<{ rows: DeliveryListing[] }>(
    `select coalesce(d.last_attempt_id, d.next_attempt_id, d.id) as delivery_id, d.event_id, e.event_type,
            d.subscription_id, d.partner_id, d.status, d.attempts, d.last_status_code, d.last_error,
            d.created_at, d.last_attempt_at
       from webhook_deliveries d join events e on e.id = d.event_id
      where (?::uuid is null or d.partner_id = ?::uuid) and (?::text is null or d.status = ?::text)
      order by d.created_at desc, d.id desc
      limit ?`,
    [
      filters.partnerId ?? null,
      filters.partnerId ?? null,
      filters.status ?? null,
      filters.status ?? null,
      filters.limit,
    ],
  );
  return rows;
}

/**
 * The delivery an operator names by any id the CLI or the API shows for it: one of its attempts',
 * its next attempt's, or its own; locked for the caller's transaction.
 */
export async function lockByAnyId(trx: Knex, someId: string): Promise<DeliveryRow | undefined> {
  const { rows } = await trx.raw<{ rows: DeliveryRow[] }>(
    `select d.* from webhook_deliveries d
      where d.id = ?::uuid or d.next_attempt_id = ?::uuid or d.last_attempt_id = ?::uuid
         or d.id = (select a.delivery_id from webhook_attempts a where a.id = ?::uuid)
      limit 1
      for update`,
    [someId, someId, someId, someId],
  );
  return rows[0];
}
