/**
 * Webhook subscriptions: subscribe (the secret is shown once), list (never the secret), rotate
 * (a new secret, shown once; deliveries from now on are signed with it).
 */
import { randomBytes } from 'node:crypto';
import type { Config } from '../../db/platform/config.ts';
import type { Knex } from '../../db/postgres/knex.ts';
import { transaction } from '../../db/postgres/transaction.ts';
import * as subscriptions from '../../db/queries/webhook-subscriptions.ts';
import { refuseTarget } from '../../db/rules/webhook-targets.ts';
import { InvalidFieldError, SubscriptionLimitReachedError, SubscriptionNotFoundError } from '../errors.ts';

/** A subscription, as the partner asked for it. */
export interface SubscriptionRequest {
  endpoint_url: string;
  event_types: string[];
}

/** The most subscriptions one partner may have (CONTRACT.md). */
export const MAX_SUBSCRIPTIONS = 10;

/** A new signing secret: 256 random bits as hex. */
function newSecret(): string {
  return randomBytes(32).toString('hex');
}

/** Creates a subscription after checking its endpoint; the row carries the new secret. */
export async function subscribe(
  db: Knex,
  config: Config,
  partnerId: string,
  input: SubscriptionRequest,
): Promise<subscriptions.SubscriptionRow> {
  const url = new URL(input.endpoint_url);
  if (url.protocol !== 'https:' && config.serviceEnv === 'production') {
    throw new InvalidFieldError('endpoint_url', 'must use https');
  }
  const refused = await refuseTarget(input.endpoint_url, config.webhookAllowPrivateTargets);
  if (refused) throw new InvalidFieldError('endpoint_url', refused);
  return transaction(db, async (trx) => {
    if ((await subscriptions.lockAndCount(trx, partnerId)) >= MAX_SUBSCRIPTIONS) {
      throw new SubscriptionLimitReachedError(MAX_SUBSCRIPTIONS);
    }
    return subscriptions.insert(trx, {
      partnerId,
      endpointUrl: input.endpoint_url,
      eventTypes: [...new Set(input.event_types)],
      secretKey: newSecret(),
    });
  });
}

/** The caller's subscriptions. */
export function listSubscriptions(db: Knex, partnerId: string): Promise<subscriptions.SubscriptionRow[]> {
  return subscriptions.listForPartner(db, partnerId);
}

/** Gives one of the caller's subscriptions a new secret. */
export async function rotateSecret(
  db: Knex,
  partnerId: string,
  subscriptionId: string,
): Promise<subscriptions.SubscriptionRow> {
  const row = await subscriptions.rotateSecret(db, partnerId, subscriptionId, newSecret());
  if (!row) throw new SubscriptionNotFoundError();
  return row;
}
