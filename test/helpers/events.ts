/**
 * A fabricated event for fixtures that need one without the change behind it (a dead letter to
 * observe, say). It is recorded and published as every event is (`record_event()`), so the
 * invariants of test/helpers/database.ts hold for fixtures too.
 */
import { randomUUID } from 'node:crypto';
import type { Knex } from '../../db/postgres/knex.ts';

/** Records a hold_created event of `partnerId` at `venueId` and publishes it; its id. */
export async function publishedEvent(db: Knex, partnerId: string, venueId: string): Promise<string> {
  const { rows } = await db.raw<{ rows: { id: string }[] }>(
    "select record_event('hold_created', ?, ?, null, null, ?, '{}'::jsonb, null) as id",
    [venueId, partnerId, randomUUID()],
  );
  return rows[0]!.id;
}
