/** Queries on `webhook_subscriptions`. */
import type { Knex } from '../postgres/knex.ts';

/** A row of `webhook_subscriptions`. */
export interface SubscriptionRow {
  id: string;
  partner_id: string;
  endpoint_url: string;
  event_types: string[];
  secret_key: string;
  is_active: boolean;
  created_at: Date;
  updated_at: Date;
}

/** Counts a partner's subscriptions after locking the partner row, so concurrent creates queue. */
export async function lockAndCount(trx: Knex, partnerId: string): Promise<number> {
  await trx('partners').where({ id: partnerId }).forUpdate().first('id');
  const [row] = await trx('webhook_subscriptions').where({ partner_id: partnerId }).count({ n: '*' });
  return Number(row?.n ?? 0);
}

/** Creates a subscription and returns it. */
export async function insert(
  trx: Knex,
  subscription: { partnerId: string; endpointUrl: string; eventTypes: string[]; secretKey: string },
): Promise<SubscriptionRow> {
  const [row] = await trx<SubscriptionRow>('webhook_subscriptions')
    .insert({
      partner_id: subscription.partnerId,
      endpoint_url: subscription.endpointUrl,
      event_types: subscription.eventTypes,
      secret_key: subscription.secretKey,
    })
    .returning('*');
  return row as SubscriptionRow;
}

/** A partner's subscriptions, oldest first. */
export function listForPartner(db: Knex, partnerId: string): Promise<SubscriptionRow[]> {
  return db<SubscriptionRow>('webhook_subscriptions')
    .where({ partner_id: partnerId })
    .orderBy(['created_at', 'id']);
}

/** Replaces a subscription's secret; the row, or undefined when it is not the partner's. */
export async function rotateSecret(
  db: Knex,
  partnerId: string,
  id: string,
  secretKey: string,
): Promise<SubscriptionRow | undefined> {
  const [row] = await db<SubscriptionRow>('webhook_subscriptions')
    .where({ id, partner_id: partnerId })
    .update({ secret_key: secretKey, updated_at: db.fn.now() })
    .returning('*');
  return row;
}
