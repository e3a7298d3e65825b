/** Queries on `webhook_deliveries` and `webhook_attempts`. */
import type { Knex } from '../knex.ts';
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
  last_status_code: number | null;
  last_error: string | null;
  next_attempt_at: Date | null;
  created_at: Date;
  last_attempt_at: Date | null;
  delivered_at: Date | null;
}

/**
 * Creates one delivery per active subscription that lists the event's type, of every partner
 * currently granted the event's venue. A repeat (the fan-out job run twice) creates nothing.
 * Returns the ids of the deliveries this call created.
 */
export async function fanOut(trx: Knex, eventId: string): Promise<string[]> {
  const { rows } = await trx.raw<{ rows: { id: string }[] }>(
    `insert into webhook_deliveries (event_id, subscription_id, partner_id)
     select e.id, s.id, s.partner_id
       from events e
       join venue_grants g on g.venue_id = e.venue_id
       join webhook_subscriptions s on s.partner_id = g.partner_id
      where e.id = ? and s.is_active and e.event_type = any (s.event_types)
     on conflict (event_id, subscription_id) do nothing
     returning id`,
    [eventId],
  );
  return rows.map((r) => r.id);
}

/** What an attempt needs: the delivery, its event and where and with which secret to send it. */
export interface AttemptPlan {
  delivery: DeliveryRow;
  event: EventRow;
  endpointUrl: string;
  secretKey: string;
}

/**
 * Starts the next attempt of a delivery that is due one (pending or failed, fewer than
 * `maxAttempts` made): counts it and names it, committed before anything is sent, so an attempt
 * cut short by a crash still counts. Undefined when the delivery needs no attempt.
 */
export async function startAttempt(
  db: Knex,
  deliveryId: string,
  attemptId: string,
  maxAttempts: number,
): Promise<AttemptPlan | undefined> {
  const { rows } = await db.raw<{
    rows: (DeliveryRow & { event: EventRow; endpoint_url: string; secret_key: string })[];
  }>(
    `with d as (
       update webhook_deliveries
          set attempts = attempts + 1, last_attempt_id = ?, last_attempt_at = now(), status = 'pending',
              next_attempt_at = null
        where id = ? and status in ('pending', 'failed') and attempts < ?
        returning *
     ), a as (
       insert into webhook_attempts (id, delivery_id, attempt, started_at)
       select ?, d.id, d.attempts, now() from d
     )
     select d.*, to_jsonb(e) as event, s.endpoint_url, s.secret_key
       from d join events e on e.id = d.event_id join webhook_subscriptions s on s.id = d.subscription_id`,
    [attemptId, deliveryId, maxAttempts, attemptId],
  );
  const row = rows[0];
  if (!row) return undefined;
  const { event, endpoint_url, secret_key, ...delivery } = row;
  return {
    delivery,
    event: { ...event, occurred_at: new Date(event.occurred_at) },
    endpointUrl: endpoint_url,
    secretKey: secret_key,
  };
}

/**
 * A delivery whose attempts ran out while an attempt was in flight (the worker died): it is
 * dead-lettered rather than left pending forever. True if this call did so.
 */
export async function deadLetterIfExhausted(
  db: Knex,
  deliveryId: string,
  maxAttempts: number,
): Promise<boolean> {
  const changed = await db('webhook_deliveries')
    .where({ id: deliveryId, status: 'pending' })
    .where('attempts', '>=', maxAttempts)
    .update({
      status: 'dead_letter',
      last_error: db.raw("coalesce(last_error, 'the worker stopped during the attempt')"),
    });
  return changed > 0;
}

/** The outcome of one attempt. */
export interface AttemptOutcome {
  ok: boolean;
  statusCode: number | null;
  error: string | null;
}

/**
 * Records an attempt's outcome: delivered; or failed with the next attempt `retryAfterSeconds`
 * from now; or, with no retry, dead-lettered. Only the attempt still current may record (a stale
 * one, overtaken after its worker was presumed dead, is ignored). True if recorded.
 */
export async function finishAttempt(
  trx: Knex,
  deliveryId: string,
  attemptId: string,
  outcome: AttemptOutcome,
  retryAfterSeconds: number | null,
): Promise<boolean> {
  await trx('webhook_attempts')
    .where({ id: attemptId })
    .update({ status_code: outcome.statusCode, error: outcome.error, finished_at: trx.fn.now() });
  const status: DeliveryStatus = outcome.ok
    ? 'delivered'
    : retryAfterSeconds !== null
      ? 'failed'
      : 'dead_letter';
  const changed = await trx('webhook_deliveries')
    .where({ id: deliveryId, last_attempt_id: attemptId, status: 'pending' })
    .update({
      status,
      last_status_code: outcome.statusCode,
      last_error: outcome.error,
      next_attempt_at:
        status === 'failed' ? trx.raw('now() + make_interval(secs => ?)', [retryAfterSeconds]) : null,
      delivered_at: outcome.ok ? trx.fn.now() : null,
    });
  return changed > 0;
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

/** Puts a dead letter back in line: attempts start again, the event and its id stay. */
export async function requeue(trx: Knex, deliveryId: string): Promise<DeliveryRow> {
  const [row] = await trx<DeliveryRow>('webhook_deliveries')
    .where({ id: deliveryId, status: 'dead_letter' })
    .update({ status: 'pending', attempts: 0, next_attempt_at: null, delivered_at: null })
    .returning('*');
  return row as DeliveryRow;
}
