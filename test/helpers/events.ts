/**
 * A fabricated event for fixtures that need one without the change behind it (a dead letter to
 * observe, say). It is published as the recorder (db/rules/events.ts) publishes, so the invariants
 * of test/helpers/database.ts hold for fixtures too.
 */
import { randomUUID } from 'node:crypto';
import type { Knex } from '../../db/postgres/knex.ts';
import { publish } from '../../db/queries/webhook-deliveries.ts';

/** Inserts a hold_created event of `partnerId` at `venueId` and publishes it; its id. */
export function publishedEvent(db: Knex, partnerId: string, venueId: string): Promise<string> {
  return db.transaction(async (trx) => {
    const [event] = await trx('events')
      .insert({
        event_type: 'hold_created',
        venue_id: venueId,
        partner_id: partnerId,
        slot_id: randomUUID(),
        details: {},
      })
      .returning<{ id: string }[]>('id');
    await publish(trx, [event!.id]);
    return event!.id;
  });
}
