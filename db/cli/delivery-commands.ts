/**
 * Webhook deliveries, for an operator answering "what failed for partner X, and send it again":
 * deliveries:list and deliveries:redeliver (CONTRACT.md, "Operator reads and recovery").
 */
import { z } from 'zod';
import { wholeNumberText } from '../platform/input.ts';
import * as deliveries from '../queries/webhook-deliveries.ts';
import { CommandError, defineCommand, id } from './command.ts';

const STATUSES = ['pending', 'delivered', 'failed', 'dead_letter'] as const;

export const deliveryCommands = [
  defineCommand({
    name: 'deliveries:list',
    usage: '[--partner ID] [--status pending|delivered|failed|dead_letter] [--limit N]',
    flags: z.strictObject({
      partner: id.optional(),
      status: z.enum(STATUSES).optional(),
      limit: wholeNumberText(1, 1000).optional(),
    }),
    async run(trx, flags) {
      const rows = await deliveries.listForOperator(trx, {
        partnerId: flags.partner,
        status: flags.status,
        limit: flags.limit ?? 100,
      });
      return { deliveries: rows };
    },
  }),
  defineCommand({
    name: 'deliveries:redeliver',
    usage: '--delivery ID',
    flags: z.strictObject({ delivery: id }),
    async run(trx, flags) {
      const delivery = await deliveries.lockByAnyId(trx, flags.delivery);
      if (!delivery) throw new CommandError(`no delivery with id ${flags.delivery}`);
      if (delivery.status !== 'dead_letter') {
        throw new CommandError(`the delivery is ${delivery.status}; only a dead letter can be redelivered`);
      }
      const requeued = await deliveries.requeue(trx, delivery.id); // and queues its first attempt
      return {
        // The new round's first attempt: the id the partner receives it with (X-Delivery-Id).
        delivery_id: requeued.next_attempt_id,
        event_id: requeued.event_id,
        status: 'pending',
      };
    },
  }),
];
