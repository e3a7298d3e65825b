/** Webhook subscriptions and deliveries as the API shows them. Secrets never appear here. */
import type { DeadLetterRow } from '../../db/queries/webhook-deliveries.ts';
import type { SubscriptionRow } from '../../db/queries/webhook-subscriptions.ts';
import type { DeadLetter, WebhookSubscription } from '../schemas/webhooks.ts';

export function presentSubscription(row: SubscriptionRow): WebhookSubscription {
  return {
    id: row.id,
    partner_id: row.partner_id,
    event_types: row.event_types as WebhookSubscription['event_types'],
    endpoint_url: row.endpoint_url,
    is_active: row.is_active,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

export function presentDeadLetter(row: DeadLetterRow): DeadLetter {
  return {
    delivery_id: row.last_attempt_id!,
    event_id: row.event_id,
    event_type: row.event_type,
    subscription_id: row.subscription_id,
    attempts: row.attempts,
    last_status_code: row.last_status_code,
    last_error: row.last_error,
    created_at: row.created_at.toISOString(),
    last_attempt_at: row.last_attempt_at?.toISOString() ?? null,
  };
}
