/**
 * webhook.deliver: one attempt of one delivery. The attempt is counted and named (its id is the
 * `delivery_id` the receiver sees) and committed before anything is sent, so a worker that dies
 * mid-attempt leaves a record and pg-boss retries the job. The body is signed with the
 * subscription's current secret and a fresh timestamp. A 2xx within WEBHOOK_TIMEOUT_MS is success;
 * anything else is a failed attempt, recorded with its status or error, and the next attempt is a
 * new job after the next of WEBHOOK_RETRY_DELAYS, enqueued in the transaction that records the
 * failure. After the fifth failure the delivery is dead-lettered.
 */
import { randomUUID } from 'node:crypto';
import type { Config } from '../db/config.ts';
import { deliveryJobOptions, enqueue, JOBS, PAYLOADS } from '../db/jobs.ts';
import * as deliveries from '../db/queries/webhook-deliveries.ts';
import { refuseTarget } from '../db/webhook-targets.ts';
import type { JobModule } from './registry.ts';
import { signWebhook, type WebhookEvent } from './webhook-signature.ts';

/** Attempts per delivery, the spec's "5 in total". */
export const MAX_ATTEMPTS = 5;

export const webhookDeliver: JobModule<{ delivery_id: string }> = {
  name: JOBS.webhookDeliver,
  payload: PAYLOADS[JOBS.webhookDeliver],
  batchSize: 5,
  pollingIntervalSeconds: 0.5,
  // Attempts of a batch run side by side, so a slow or dead endpoint delays no other attempt's
  // request, only its own batch's completion; sixteen pollers keep fetching meanwhile.
  concurrentBatch: true,
  localConcurrency: 16,
  async handle({ delivery_id }, { db, boss, config, log }) {
    const attemptId = randomUUID();
    const plan = await deliveries.startAttempt(db, delivery_id, attemptId, MAX_ATTEMPTS);
    if (!plan) {
      await deliveries.deadLetterIfExhausted(db, delivery_id, MAX_ATTEMPTS);
      return;
    }
    const outcome = await attempt(plan, attemptId, config);
    const attempts = plan.delivery.attempts;
    const delay = outcome.ok || attempts >= MAX_ATTEMPTS ? null : config.webhookRetryDelays[attempts - 1]!;
    await db.transaction(async (trx) => {
      const recorded = await deliveries.finishAttempt(trx, delivery_id, attemptId, outcome, delay);
      if (recorded && delay !== null) {
        const options = deliveryJobOptions(config, delay);
        await enqueue(boss, trx, JOBS.webhookDeliver, { delivery_id }, options);
      }
    });
    log.info(
      {
        delivery_id,
        attempt_id: attemptId,
        attempt: attempts,
        ok: outcome.ok,
        status: outcome.statusCode,
        error: outcome.error,
      },
      'webhook attempt',
    );
  },
};

/** The body partners receive (WebhookDeliveryPayload). */
export function deliveryPayload(plan: deliveries.AttemptPlan, attemptId: string): WebhookEvent {
  const { event } = plan;
  return {
    event_id: event.id,
    event_type: event.event_type,
    timestamp: event.occurred_at.toISOString(),
    venue_id: event.venue_id,
    slot_id: event.slot_id,
    hold_id: event.hold_id,
    booking_id: event.booking_id,
    partner_id: event.partner_id,
    details: event.details,
    delivery_id: attemptId,
  };
}

/** Sends one attempt; never throws for anything the endpoint or network does. */
async function attempt(
  plan: deliveries.AttemptPlan,
  attemptId: string,
  config: Config,
): Promise<deliveries.AttemptOutcome> {
  const refused = await refuseTarget(plan.endpointUrl, config.webhookAllowPrivateTargets);
  if (refused) return { ok: false, statusCode: null, error: refused };
  const body = JSON.stringify(deliveryPayload(plan, attemptId));
  const timestamp = Math.floor(Date.now() / 1000);
  try {
    const response = await fetch(plan.endpointUrl, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/json',
        'User-Agent': 'partner-booking-webhooks/1',
        'X-Webhook-Event': plan.event.event_type,
        'X-Delivery-Id': attemptId,
        'X-Delivery-Attempt': String(plan.delivery.attempts),
        'X-Service-Timestamp': String(timestamp),
        'X-Service-Signature': signWebhook(plan.secretKey, timestamp, body),
      },
      body,
      // A redirect is not a 2xx, and following one could lead anywhere.
      redirect: 'manual',
      signal: AbortSignal.timeout(config.webhookTimeoutMs),
    });
    await response.body?.cancel().catch(() => undefined);
    if (response.status >= 200 && response.status < 300)
      return { ok: true, statusCode: response.status, error: null };
    return { ok: false, statusCode: response.status, error: `the endpoint answered ${response.status}` };
  } catch (err) {
    return { ok: false, statusCode: null, error: describeFailure(err, config) };
  }
}

function describeFailure(err: unknown, config: Config): string {
  const e = err as { name?: string; message?: string; cause?: { code?: string; message?: string } };
  if (e.name === 'TimeoutError' || e.name === 'AbortError')
    return `no answer within ${config.webhookTimeoutMs} ms`;
  const code = e.cause?.code;
  if (code) return `connection failed: ${code}`;
  return `request failed: ${e.cause?.message ?? e.message ?? 'unknown error'}`;
}
