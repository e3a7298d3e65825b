/**
 * One webhook attempt: the delivery body with the attempt's `delivery_id`, signed with the
 * subscription's current secret and a fresh timestamp, POSTed (workers/webhook-http.ts), and the
 * outcome to record: a 2xx within WEBHOOK_TIMEOUT_MS, DNS included, is success; a failure names
 * the next attempt after the next of WEBHOOK_RETRY_DELAYS, or none after the fifth (the dead
 * letter). The attempt was claimed before (db/queries/webhook-deliveries.ts `claimDue`): counted
 * and started in the database, so it runs at most once. The dispatcher records the outcome.
 */
import type { LookupFunction } from 'node:net';
import type { Config } from '../db/platform/config.ts';
import { unserved, type Metrics } from '../db/platform/metrics.ts';
import { inTraceSpan, setSpanAttribute } from '../db/platform/tracing.ts';
import type { AttemptPlan, SettledAttempt } from '../db/queries/webhook-deliveries.ts';
import { eventPayload } from '../db/rules/event-payload.ts';
import { nextAttempt } from '../db/rules/webhook-attempts.ts';
import { postWebhook, type WebhookClient } from './webhook-http.ts';
import { signStandardWebhook, signWebhook, type WebhookEvent } from '../db/rules/webhook-signature.ts';

/** What an attempt needs besides its plan. */
export interface AttemptDeps {
  config: Config;
  metrics?: Metrics | undefined;
  /** The resolver the attempt dials through (tests inject one); db/platform/host-resolver.ts by default. */
  lookup?: LookupFunction | undefined;
  /**
   * The pooled client to send through (the dispatcher's, made with the same config and lookup);
   * without one, the attempt opens a connection of its own and closes it afterwards.
   */
  http?: WebhookClient | undefined;
}

/** The span name of an attempt, as the job kind was called when attempts were pg-boss jobs. */
const ATTEMPT_SPAN = 'webhook.deliver';

/**
 * Makes the attempt `plan` names and says how it went, with the attempt to schedule next on a
 * failure. In the trace of what published (or redelivered) the delivery. Never throws for anything
 * the endpoint, DNS or the network does.
 */
export function sendAttempt(plan: AttemptPlan, deps: AttemptDeps): Promise<SettledAttempt> {
  const attributes = { 'messaging.message.id': plan.attemptId };
  return inTraceSpan(ATTEMPT_SPAN, plan.trace, attributes, async () => {
    // The partner's delivery_id (X-Delivery-Id) names the attempt, in traces as on the wire.
    setSpanAttribute('webhook.delivery_id', plan.attemptId);
    const { config, lookup, http, metrics = unserved } = deps;
    const attempt = plan.delivery.attempts;
    const body = JSON.stringify(deliveryPayload(plan));
    const timestamp = Math.floor(Date.now() / 1000);
    const headers = {
      'Content-Type': 'application/json',
      'User-Agent': 'partner-booking-webhooks/1',
      'X-Webhook-Event': plan.event.event_type,
      'X-Delivery-Id': plan.attemptId,
      'X-Delivery-Attempt': String(attempt),
      'X-Service-Timestamp': String(timestamp),
      'X-Service-Signature': signWebhook(plan.secretKey, timestamp, body),
      // Standard Webhooks: the id is the event's, the same on every attempt and redelivery.
      'webhook-id': plan.event.id,
      'webhook-timestamp': String(timestamp),
      'webhook-signature': signStandardWebhook(plan.secretKey, plan.event.id, timestamp, body),
    };
    const started = process.hrtime.bigint();
    const outcome = http
      ? await http.post(plan.endpointUrl, headers, body)
      : await postWebhook(plan.endpointUrl, headers, body, {
          timeoutMs: config.webhookTimeoutMs,
          allowPrivate: config.webhookAllowPrivateTargets,
          lookup,
        });
    metrics.deliveryDuration.observe(Number(process.hrtime.bigint() - started) / 1e9);
    return {
      deliveryId: plan.delivery.id,
      attemptId: plan.attemptId,
      outcome,
      next: outcome.ok ? null : nextAttempt(config, attempt),
    };
  });
}

/** The body partners receive (WebhookDeliveryPayload). */
export function deliveryPayload(plan: AttemptPlan): WebhookEvent {
  return eventPayload(plan.event, plan.attemptId);
}
