/**
 * A fabricated event for fixtures that need one without the change behind it (a dead letter to
 * observe, say). It is published as the recorder (db/rules/events.ts) would publish it: its
 * fan-out job is enqueued with it, so the invariant that every event row has exactly one fan-out
 * job (test/helpers/database.ts) holds for fixtures too.
 */
import { randomUUID } from 'node:crypto';
import type { PgBoss } from 'pg-boss';
import { enqueue } from '../../db/jobs/enqueue.ts';
import { WEBHOOK_FANOUT } from '../../db/jobs/kinds.ts';
import type { Knex } from '../../db/postgres/knex.ts';

/** Inserts a hold_created event of `partnerId` at `venueId` and enqueues its fan-out; its id. */
export function publishedEvent(db: Knex, boss: PgBoss, partnerId: string, venueId: string): Promise<string> {
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
    await enqueue(boss, trx, WEBHOOK_FANOUT, { event_id: event!.id });
    return event!.id;
  });
}
