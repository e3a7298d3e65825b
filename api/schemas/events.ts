import { z } from 'zod';
import { EVENT_TYPES, type EventType } from '../../db/queries/events.ts';
import { DateTimeInput, queryInteger, Uuid } from './shared.ts';
import { WebhookDeliveryPayload } from './webhooks.ts';

const KNOWN_TYPES: ReadonlySet<string> = new Set(EVENT_TYPES);

export const EventPullQuery = z
  .object({
    starting_after: Uuid.optional().meta({
      description: 'The `event_id` of the last event of the previous page: the events after it.',
    }),
    since: DateTimeInput.optional().meta({
      description: 'Only events whose `timestamp` is at or after this instant. Not with `starting_after`.',
    }),
    types: z
      .string()
      .max(500)
      .superRefine((value, ctx) => {
        const unknown = value.split(',').filter((type) => !KNOWN_TYPES.has(type));
        if (unknown.length > 0) {
          ctx.addIssue({
            code: 'custom',
            message: `must list event types separated by commas (${EVENT_TYPES.join(', ')})`,
          });
        }
      })
      .transform((value) => [...new Set(value.split(','))] as EventType[])
      .optional()
      .meta({ description: 'Comma-separated event types, e.g. `booking_created,booking_cancelled`.' }),
    limit: queryInteger(1, 100).default(50),
  })
  .refine((q) => !(q.starting_after && q.since), {
    message: 'give starting_after or since, not both',
    path: ['since'],
  });
export type EventPullQuery = z.infer<typeof EventPullQuery>;

/** An event as the pull lists it: the delivery body, without an attempt. */
export const PulledEvent = WebhookDeliveryPayload.extend({
  delivery_id: z.null().meta({ description: 'Always null here: no delivery attempt carried it.' }),
}).meta({ id: 'PulledEvent' });

export const EventPullResponse = z
  .object({
    data: z.array(PulledEvent).meta({ description: 'Oldest first.' }),
    has_more: z.boolean().meta({
      description:
        'Whether at least one more event matches after the last of this page; ask with `starting_after`. ' +
        'False on a page that ends at the last match, even a full one.',
    }),
  })
  .meta({ id: 'EventPage' });
