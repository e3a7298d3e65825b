/** Delivery observability and redelivery of dead letters, for the caller's own deliveries. */
import type { Knex } from '../../db/postgres/knex.ts';
import { transaction } from '../../db/postgres/transaction.ts';
import * as deliveries from '../../db/queries/webhook-deliveries.ts';
import { DeliveryNotDeadLetteredError, DeliveryNotFoundError } from '../errors.ts';

/** How many dead letters observability lists. */
const DEAD_LETTERS_SHOWN = 100;

/** Counts by status and the most recent dead letters. */
export async function observeDeliveries(db: Knex, partnerId: string) {
  const [counts, deadLetters] = await Promise.all([
    deliveries.countByStatus(db, partnerId),
    deliveries.listDeadLetters(db, partnerId, DEAD_LETTERS_SHOWN),
  ]);
  return { counts, deadLetters };
}

/**
 * Puts a dead-lettered delivery (named by any of its attempts' ids) back in line: same event and
 * event_id, attempts counted afresh, the first one named anew and queued in the same transaction
 * (deliveries.requeue). The new job carries that name, so no job left from the earlier round can
 * run an attempt of this one.
 */
export async function redeliver(
  db: Knex,
  partnerId: string,
  attemptId: string,
): Promise<deliveries.DeliveryRow> {
  return transaction(db, async (trx) => {
    const delivery = await deliveries.lockByAttemptId(trx, partnerId, attemptId);
    if (!delivery) throw new DeliveryNotFoundError();
    if (delivery.status !== 'dead_letter') {
      throw new DeliveryNotDeadLetteredError(
        `The delivery is ${delivery.status}; only a dead letter can be redelivered.`,
      );
    }
    return deliveries.requeue(trx, delivery.id);
  });
}
