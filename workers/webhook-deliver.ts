/**
 * webhook.deliver: one attempt of one delivery. Every attempt is named before it runs: its id is
 * made when it is scheduled (fan-out, a failed attempt, a redelivery), stored as the delivery's
 * `next_attempt_id` with its time, and carried by the job queued for it. A job runs its own attempt
 * or nothing, at most once and never early: claiming counts the attempt, records its start and
 * clears the name in one statement committed before anything is sent, and only when the name
 * matches and `next_attempt_at` has passed.
 *
 * pg-boss delivers a job at least once (a retried batch, a job retried on expiry while its handler
 * still runs), so a job that cannot claim looks at where its attempt stands:
 * - finished, or not its attempt (an earlier one, or one of an earlier redelivery round): nothing
 *   to do, the job completes;
 * - in flight elsewhere: the job fails (RetryLaterError) and pg-boss retries it later; it neither
 *   sends nor completes, because the attempt's worker may be dead;
 * - in flight past its lease (started_at + WEBHOOK_TIMEOUT_MS + a margin): that worker is presumed
 *   dead; the job records the attempt as failed and moves the delivery on, exactly once (a
 *   conditional update), to the next attempt or, after the fifth, the dead letter;
 * - named but not due: the job does not send; it queues its attempt again for the right time.
 *
 * The attempt itself (workers/webhook-http.ts) is signed with the subscription's current secret and
 * a fresh timestamp; a 2xx within WEBHOOK_TIMEOUT_MS, DNS included, is success. A failure schedules
 * the next attempt after the next of WEBHOOK_RETRY_DELAYS, in the transaction that records it.
 */
import { randomUUID } from 'node:crypto';
import type { Config } from '../db/platform/config.ts';
import { unserved, type Metrics } from '../db/platform/metrics.ts';
import { setSpanAttribute } from '../db/platform/tracing.ts';
import { enqueue } from '../db/jobs/enqueue.ts';
import { attemptLeaseSeconds, WEBHOOK_DELIVER, type PayloadOf } from '../db/jobs/kinds.ts';
import type { Knex } from '../db/postgres/knex.ts';
import * as deliveries from '../db/queries/webhook-deliveries.ts';
import { RetryLaterError, type JobDeps, type JobHandler } from './job-handler.ts';
import { postWebhook } from './webhook-http.ts';
import { eventPayload } from '../db/rules/event-payload.ts';
import { signStandardWebhook, signWebhook, type WebhookEvent } from './webhook-signature.ts';

/** Attempts per delivery, the spec's "5 in total" (declared with the kind). */
export const MAX_ATTEMPTS = WEBHOOK_DELIVER.attempts;

/** The last_error of an attempt whose worker died (or stalled) past the attempt's lease. */
export const ABANDONED_ATTEMPT = 'the worker stopped during the attempt';

type Payload = PayloadOf<typeof WEBHOOK_DELIVER>;

/** The `webhook.deliver` job: runs the attempt its payload names, or nothing (see above). */
export const webhookDeliver: JobHandler<Payload> = {
  kind: WEBHOOK_DELIVER,
  batchSize: 5,
  pollingIntervalSeconds: 0.5,
  // Attempts of a batch run side by side and each job settles on its own, so a slow or dead
  // endpoint delays no other attempt; sixteen pollers keep fetching meanwhile.
  concurrentBatch: true,
  localConcurrency: 16,
  async handle(payload, deps) {
    const plan = await deliveries.claimAttempt(
      deps.db,
      payload.delivery_id,
      payload.attempt_id,
      MAX_ATTEMPTS,
    );
    if (plan) await runAttempt(plan, deps);
    else await notClaimed(payload, deps);
  },
};

/** Sends a claimed attempt and records its outcome, scheduling the next attempt on failure. */
async function runAttempt(plan: deliveries.AttemptPlan, deps: JobDeps) {
  const { db, boss, config, log, lookup, metrics = unserved } = deps;
  const { attemptId } = plan;
  // The partner's delivery_id (X-Delivery-Id) names the attempt, in traces as on the wire.
  setSpanAttribute('webhook.delivery_id', attemptId);
  const attempt = plan.delivery.attempts;
  const body = JSON.stringify(deliveryPayload(plan));
  const timestamp = Math.floor(Date.now() / 1000);
  const headers = {
    'Content-Type': 'application/json',
    'User-Agent': 'partner-booking-webhooks/1',
    'X-Webhook-Event': plan.event.event_type,
    'X-Delivery-Id': attemptId,
    'X-Delivery-Attempt': String(attempt),
    'X-Service-Timestamp': String(timestamp),
    'X-Service-Signature': signWebhook(plan.secretKey, timestamp, body),
    // Standard Webhooks: the id is the event's, the same on every attempt and redelivery.
    'webhook-id': plan.event.id,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': signStandardWebhook(plan.secretKey, plan.event.id, timestamp, body),
  };
  const started = process.hrtime.bigint();
  const outcome = await postWebhook(plan.endpointUrl, headers, body, {
    timeoutMs: config.webhookTimeoutMs,
    allowPrivate: config.webhookAllowPrivateTargets,
    lookup,
  });
  metrics.deliveryDuration.observe(Number(process.hrtime.bigint() - started) / 1e9);
  const next = outcome.ok ? null : nextAttempt(config, attempt);
  const deliveryId = plan.delivery.id;
  const recorded = await db.transaction(async (trx) => {
    const recorded = await deliveries.finishAttempt(trx, { deliveryId, attemptId, outcome, next });
    if (recorded && next) await scheduleAttempt(boss, config, trx, deliveryId, next);
    return recorded;
  });
  const { ok, statusCode: status, error } = outcome;
  countAttempt(metrics, ok, recorded && !ok && !next);
  // recorded false: another job declared this attempt abandoned meanwhile and moved the delivery on.
  const fields = { delivery_id: deliveryId, attempt_id: attemptId, attempt, ok, status, error, recorded };
  log.info(fields, 'webhook attempt');
}

/** A job that could not claim its attempt: why not, and what that asks of it (module header). */
async function notClaimed(payload: Payload, deps: JobDeps): Promise<void> {
  const { db, config, log } = deps;
  const leaseSeconds = attemptLeaseSeconds(config);
  const state = await deliveries.attemptState(db, payload.delivery_id, leaseSeconds);
  if (!state) return;
  const own = payload.attempt_id;
  if (state.in_flight) {
    if (own !== undefined && own !== state.last_attempt_id) return; // an earlier attempt's job
    if (!state.lease_passed)
      throw new RetryLaterError(`attempt ${state.last_attempt_id} of this delivery is in flight`);
    await takeOver(payload.delivery_id, state.last_attempt_id!, state.attempts, deps);
    return;
  }
  if (state.status !== 'pending' && state.status !== 'failed') return; // delivered or dead letter
  if (own === undefined || own !== state.next_attempt_id) return; // finished, or another round's
  if (state.due) throw new RetryLaterError('the attempt came due while it was being claimed');
  await db.transaction(async (trx) => {
    const at = await deliveries.lockEarlyAttempt(trx, payload.delivery_id, own);
    // A Date holds milliseconds and the column microseconds: one millisecond later, never earlier.
    const startAfter = at && new Date(at.getTime() + 1);
    if (startAfter) await enqueue(deps.boss, trx, WEBHOOK_DELIVER, payload, { config, startAfter });
  });
  log.info({ delivery_id: payload.delivery_id, attempt_id: own }, 'early webhook job queued for its time');
}

/** Records an attempt whose lease passed as failed and moves its delivery on, at most once. */
async function takeOver(deliveryId: string, attemptId: string, attempt: number, deps: JobDeps) {
  const { db, boss, config, log, metrics = unserved } = deps;
  const next = nextAttempt(config, attempt);
  const outcome = { ok: false, statusCode: null, error: ABANDONED_ATTEMPT };
  const abandonedAfterSeconds = attemptLeaseSeconds(config);
  const recorded = await db.transaction(async (trx) => {
    const finished = { deliveryId, attemptId, outcome, next, abandonedAfterSeconds };
    const recorded = await deliveries.finishAttempt(trx, finished);
    if (recorded && next) await scheduleAttempt(boss, config, trx, deliveryId, next);
    return recorded;
  });
  if (!recorded) return;
  countAttempt(metrics, false, !next);
  log.warn({ delivery_id: deliveryId, attempt_id: attemptId, attempt }, 'webhook attempt abandoned');
}

/** Counts an attempt recorded as `ok` or failed, and the dead letter a last failure makes. */
function countAttempt(metrics: Metrics, ok: boolean, deadLetter: boolean): void {
  metrics.deliveryAttempts.inc({ outcome: ok ? 'delivered' : 'failed' });
  if (deadLetter) metrics.deadLetters.inc();
}

/** The attempt after failed attempt number `attempt`, or null when that was the last. */
function nextAttempt(config: Config, attempt: number): { attemptId: string; afterSeconds: number } | null {
  if (attempt >= MAX_ATTEMPTS) return null;
  return { attemptId: randomUUID(), afterSeconds: config.webhookRetryDelays[attempt - 1]! };
}

/** Queues the job of a scheduled attempt in `trx`, the transaction that scheduled it. */
function scheduleAttempt(
  boss: JobDeps['boss'],
  config: Config,
  trx: Knex.Transaction,
  deliveryId: string,
  next: { attemptId: string; afterSeconds: number },
): Promise<void> {
  const payload = { delivery_id: deliveryId, attempt_id: next.attemptId };
  return enqueue(boss, trx, WEBHOOK_DELIVER, payload, { config, startAfter: next.afterSeconds });
}

/** The body partners receive (WebhookDeliveryPayload). */
export function deliveryPayload(plan: deliveries.AttemptPlan): WebhookEvent {
  return eventPayload(plan.event, plan.attemptId);
}
