/** Queries on `webhook_deliveries` and `webhook_attempts`. */
import { parseTraceSetting, traceSetting, type JobTrace } from '../platform/tracing.ts';
import type { Knex } from '../postgres/knex.ts';
import { runStatement } from '../postgres/statement.ts';
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
  /** The trace of what published or redelivered it (db/platform/tracing.ts), or null. */
  trace: string | null;
}

/**
 * The channel workers LISTEN on for attempts that have just come due: `publish_event()` and a
 * redelivery (`queue_delivery_attempt()`) notify it, once per transaction.
 */
export const ATTEMPTS_DUE_CHANNEL = 'webhook_attempts_due';

/** What an attempt needs: the delivery, its event and where and with which secret to send it. */
export interface AttemptPlan {
  delivery: DeliveryRow;
  /** The attempt's id: the `delivery_id` the partner sees. */
  attemptId: string;
  event: EventRow;
  endpointUrl: string;
  /** The endpoint's origin (scheme and authority): attempts are limited per origin. */
  origin: string;
  secretKey: string;
  /**
   * The trace of what published (or redelivered) the delivery, as `booking.trace` wrote it, read
   * once here for the attempt's span and log line; null for none (or for text that is not one).
   */
  trace: JobTrace | null;
}

/** How much a claim may take. */
export interface ClaimLimits {
  /** Attempts at most. */
  limit: number;
  /** Attempts of one origin in flight in the claiming worker, at most. */
  perOrigin: number;
  /** Attempts of each origin the claiming worker has in flight now. */
  busy: ReadonlyMap<string, number>;
  /** Only these deliveries (tests run one delivery's attempts by hand). */
  only?: readonly string[] | undefined;
}

/**
 * Starts the attempts that are due, oldest first, as many as `limits` allow: no more than
 * `perOrigin` of one origin in flight in this worker, and none of an origin already at that, so
 * one endpoint's backlog never keeps another's attempts from being claimed. An attempt is due when
 * its delivery names it (`next_attempt_id`) and its time has come. Claiming counts it, records its
 * start and clears the name in one statement committed before anything is sent, so an attempt
 * runs at most once (rows another worker is claiming are skipped, not waited for) and one cut
 * short by a crash still counts. Each comes with its event, endpoint and current secret.
 *
 * The claim ranks each subscription's oldest due attempts, as many as its origin has room for,
 * found by a skip scan of `webhook_deliveries_named_idx` (one probe per subscription with a named
 * attempt, then its due ones in order): however deep one origin's backlog, another's due attempt
 * is among those ranked. (It ranked the oldest due attempts of all, four times the limit: an
 * origin failing at once is never at its limit when a claim runs, and its backlog filled that
 * window, so every other origin waited until it was under it.) Only the attempts picked are locked.
 *
 * A named attempt is always of a pending or failed delivery, so the claim does not say so: with
 * the status in the condition, the planner combined the named index with the partner-status index
 * in a bitmap scan, which reads every entry either index keeps for rows since updated (each claim
 * and outcome leaves one until vacuum), some 90,000 after 30,000 deliveries, on every claim. An
 * index scan marks such entries dead the first time it meets them and skips them after.
 */
export async function claimDue(db: Knex, limits: ClaimLimits, maxAttempts: number): Promise<AttemptPlan[]> {
  const full = [...limits.busy].filter(([, n]) => n >= limits.perOrigin).map(([origin]) => origin);
  const busy = JSON.stringify(Object.fromEntries(limits.busy));
  const only = limits.only ? [...limits.only] : null;
  // runStatement, as the web's hot statements: at a steady pace there is one claim per event.
  const { rows } = await runStatement<
    DeliveryRow & { event: EventRow; endpoint_url: string; origin: string; secret_key: string }
  >(
    db,
    `with recursive named as (
       (select d.subscription_id from webhook_deliveries d
         where d.next_attempt_id is not null order by d.subscription_id limit 1)
       union all
       select (select d.subscription_id from webhook_deliveries d
                where d.next_attempt_id is not null and d.subscription_id > n.subscription_id
                order by d.subscription_id limit 1)
         from named n where n.subscription_id is not null
     ), candidates as (
       select c.id, c.next_attempt_at, s.origin
         from named n
         join webhook_subscriptions s on s.id = n.subscription_id and not (s.origin = any (?::text[]))
        cross join lateral (
          select d.id, d.next_attempt_at from webhook_deliveries d
           where d.subscription_id = n.subscription_id and d.next_attempt_id is not null
             and d.next_attempt_at <= now() and d.attempts < ?
             and (?::uuid[] is null or d.id = any (?::uuid[]))
           order by d.next_attempt_at
           limit greatest(? - coalesce((?::jsonb ->> s.origin)::integer, 0), 0)) c
     ), picked as (
       select r.id from (
         select c.*, row_number() over (partition by c.origin order by c.next_attempt_at, c.id) as rank
           from candidates c) r
        where r.rank <= ? - coalesce((?::jsonb ->> r.origin)::integer, 0)
        order by r.next_attempt_at
        limit ?
     ), locked as (
       -- Read again as locked: another worker may have claimed (and settled) one since.
       select d.id from webhook_deliveries d join picked p on p.id = d.id
        where d.next_attempt_id is not null and d.next_attempt_at <= now() and d.attempts < ?
          for update of d skip locked
     ), claimed as (
       update webhook_deliveries d
          set attempts = d.attempts + 1, last_attempt_id = d.next_attempt_id, last_attempt_at = now(),
              status = 'pending', next_attempt_id = null, next_attempt_at = null
         from locked p where d.id = p.id
       returning d.*
     ), started as (
       insert into webhook_attempts (id, delivery_id, attempt, started_at)
       select c.last_attempt_id, c.id, c.attempts, now() from claimed c
     )
     select c.*, to_jsonb(e) as event, s.endpoint_url, s.origin, s.secret_key
       from claimed c join events e on e.id = c.event_id join webhook_subscriptions s on s.id = c.subscription_id`,
    [
      full,
      maxAttempts,
      only,
      only,
      limits.perOrigin,
      busy,
      limits.perOrigin,
      busy,
      limits.limit,
      maxAttempts,
    ],
  );
  return rows.map(({ event, endpoint_url, origin, secret_key, ...delivery }) => ({
    delivery,
    attemptId: delivery.last_attempt_id!,
    event: { ...event, occurred_at: new Date(event.occurred_at) },
    endpointUrl: endpoint_url,
    origin,
    secretKey: secret_key,
    trace: parseTraceSetting(delivery.trace),
  }));
}

/** The outcome of one attempt. */
export interface AttemptOutcome {
  ok: boolean;
  statusCode: number | null;
  error: string | null;
}

/** The attempt scheduled after a failure: its id (the partner's next `delivery_id`) and delay. */
export interface NextAttempt {
  attemptId: string;
  afterSeconds: number;
}

/** One attempt's outcome, to record. */
export interface SettledAttempt {
  deliveryId: string;
  attemptId: string;
  outcome: AttemptOutcome;
  /** The attempt to schedule after a failure, or null: none (delivered, or the last one failed). */
  next: NextAttempt | null;
}

/**
 * Records attempts' outcomes, each on its own delivery, in one statement (one round trip for the
 * batch): delivered; or failed with the named next attempt `afterSeconds` from now; or, with none,
 * dead-lettered. Only the attempt in flight may record, so a stale one changes nothing, with one
 * exception: a success of an attempt that was declared abandoned (its worker was slow, not dead)
 * still marks the delivery delivered, since the partner has the event and a dead letter or a
 * further attempt would say otherwise. Each attempt's own row takes the outcome its worker saw.
 * Resolves to the attempts whose delivery this changed.
 *
 * Deliveries are written before attempts, the order every writer of both keeps, so none deadlocks
 * with another: the statement reads the deliveries' update, which PostgreSQL therefore runs first,
 * and the attempts' update, which nothing reads, after it, when the statement ends.
 */
export async function settle(db: Knex, attempts: readonly SettledAttempt[]): Promise<Set<string>> {
  if (attempts.length === 0) return new Set();
  const column = <T>(pick: (a: SettledAttempt) => T) => attempts.map(pick);
  // Arrays with nulls in them, which knex's binding type does not list but pg sends as arrays.
  const bindings = [
    column((a) => a.deliveryId),
    column((a) => a.attemptId),
    column((a) => a.outcome.ok),
    column((a) => a.outcome.statusCode),
    column((a) => a.outcome.error),
    column((a) => a.next?.attemptId ?? null),
    column((a) => a.next?.afterSeconds ?? null),
  ] as Knex.RawBinding[];
  const { rows } = await runStatement<{ attempt_id: string }>(
    db,
    `with o as materialized (
       select * from unnest(?::uuid[], ?::uuid[], ?::boolean[], ?::integer[], ?::text[], ?::uuid[], ?::float8[])
         as o(delivery_id, attempt_id, ok, status_code, error, next_id, after_seconds)
     ), delivery as (
       update webhook_deliveries d
          set status = case when o.ok then 'delivered' when o.next_id is not null then 'failed' else 'dead_letter' end,
              last_status_code = o.status_code, last_error = o.error, next_attempt_id = o.next_id,
              next_attempt_at = now() + make_interval(secs => o.after_seconds),
              delivered_at = case when o.ok then now() end
         from o
        where d.id = o.delivery_id and d.last_attempt_id = o.attempt_id
          and ((d.status = 'pending' and d.next_attempt_id is null)
               or (o.ok and d.status in ('failed', 'dead_letter')))
       returning o.attempt_id
     ), attempt as (
       update webhook_attempts a set status_code = o.status_code, error = o.error, finished_at = now()
         from o where a.id = o.attempt_id
     )
     select attempt_id from delivery`,
    bindings,
  );
  return new Set(rows.map((row) => row.attempt_id));
}

/**
 * Records as failed, with `error`, the attempts in flight longer than their lease (`leaseSeconds`:
 * their worker died or stalled), at most `limit` of them, and moves each delivery on exactly once:
 * to its next attempt after the next of `retryDelays`, or, after the last, to the dead letter.
 * Rows another worker holds are skipped. Resolves to each moved delivery's new status.
 */
export async function takeOverAbandoned(
  db: Knex,
  rules: {
    leaseSeconds: number;
    maxAttempts: number;
    retryDelays: readonly number[];
    limit: number;
    error: string;
  },
): Promise<DeliveryStatus[]> {
  const { rows } = await db.raw<{ rows: { status: DeliveryStatus }[] }>(
    `with abandoned as (
       select d.id, d.last_attempt_id from webhook_deliveries d
        where d.status = 'pending' and d.next_attempt_id is null and d.attempts > 0
          and d.last_attempt_at + make_interval(secs => ?) <= now()
        order by d.last_attempt_at
        limit ?
        for update skip locked
     ), moved as (
       update webhook_deliveries d
          set status = case when d.attempts >= ? then 'dead_letter' else 'failed' end,
              last_status_code = null, last_error = ?,
              next_attempt_id = case when d.attempts < ? then gen_random_uuid() end,
              next_attempt_at = case when d.attempts < ?
                                     then now() + make_interval(secs => (?::float8[])[d.attempts]) end
         from abandoned a where d.id = a.id
       returning d.status, a.last_attempt_id
     ), marked as (
       update webhook_attempts w set error = ?, finished_at = now()
         from moved m where w.id = m.last_attempt_id and w.finished_at is null
     )
     select status from moved`,
    [
      rules.leaseSeconds,
      rules.limit,
      rules.maxAttempts,
      rules.error,
      rules.maxAttempts,
      rules.maxAttempts,
      [...rules.retryDelays],
      rules.error,
    ],
  );
  return rows.map((row) => row.status);
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
 * Puts a dead letter back in line with its first attempt due now, in the caller's transaction, and
 * wakes the workers when it commits: the API's redeliver and the operator's `deliveries:redeliver`
 * both come here. Attempts are counted afresh and the first one is named anew, so nothing of the
 * earlier round can run it; the event and its id stay. Its attempts continue the trace of the
 * request redelivering (tracing.ts); the operator's CLI has none.
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
      trace: traceSetting(),
    })
    .returning('*');
  const requeued = row as DeliveryRow;
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

/**
 * The newest deliveries first, of one partner and in one status when asked. Each is named by its
 * last attempt, or, while its round has sent none (new, or just redelivered), by the attempt it
 * will send first.
 */
export async function listForOperator(
  db: Knex,
  filters: { partnerId?: string | undefined; status?: string | undefined; limit: number },
): Promise<DeliveryListing[]> {
  const { rows } = await db.raw<{ rows: DeliveryListing[] }>(
    `select coalesce(case when d.attempts = 0 then d.next_attempt_id end, d.last_attempt_id, d.next_attempt_id, d.id)
              as delivery_id, d.event_id, e.event_type,
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
