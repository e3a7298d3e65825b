/**
 * The availability change log and its readers (db/functions/record_availability_change.sql and the
 * functions beside it): positioning committed changes, reading events after a position, judging a
 * cursor's expiry, pruning, recording an operator's range, and the rows of open streams that the
 * per-partner limit counts across web processes.
 */
import type { Knex } from '../postgres/knex.ts';

/** A place in the feed: after change `position`, or after its event `k` when `k` is set. */
export interface FeedPosition {
  position: bigint;
  k: number | null;
}

/** An event as the feed lists it: its change's position and its place in it, its venue, its JSON. */
export interface FeedEvent {
  position: bigint;
  k: number;
  venueId: string;
  /** `type` and the fields of a `slot` or `range` event, the cursor aside. */
  event: Record<string, unknown> & { type: 'slot' | 'range'; resource_id: string | null };
}

/** Positions every committed change without one; the log's last position (0 when empty). */
export async function sequence(db: Knex): Promise<bigint> {
  const { rows } = await db.raw<{ rows: { position: string }[] }>(
    'select sequence_availability_changes()::text as position',
  );
  return BigInt(rows[0]!.position);
}

/** The events after `after` of these venues (one resource's and the venue-wide ones, when given). */
export async function eventsAfter(
  db: Knex,
  venueIds: readonly string[],
  after: FeedPosition,
  resourceId: string | null,
  limit: number,
): Promise<FeedEvent[]> {
  const { rows } = await db.raw<{
    rows: { change_position: string; k: number; venue_id: string; event: FeedEvent['event'] }[];
  }>(
    'select change_position::text, k, venue_id, event from availability_feed(?::uuid[], ?::bigint, ?, ?, ?)',
    [[...venueIds], after.position.toString(), after.k, resourceId, limit],
  );
  return rows.map((r) => ({
    position: BigInt(r.change_position),
    k: r.k,
    venueId: r.venue_id,
    event: r.event,
  }));
}

/**
 * Whether a cursor has expired for the venue (availability_cursor_expired()): a change of the venue
 * positioned after its change is older than the retention. An event's cursor is judged by the
 * change it lies in, as CONTRACT.md keeps a quiet venue's cursor valid however old: the last event
 * a client read stays a cursor to resume from (that change is not positioned after it).
 */
export async function cursorExpired(
  db: Knex,
  venueId: string,
  cursor: FeedPosition,
  retentionSeconds: number,
): Promise<boolean> {
  const { rows } = await db.raw<{ rows: { expired: boolean }[] }>(
    'select availability_cursor_expired(?, ?::bigint, ?) as expired',
    [venueId, cursor.position.toString(), retentionSeconds],
  );
  return rows[0]!.expired;
}

/** Deletes up to `batch` changes older than the retention; how many it deleted. */
export async function prune(db: Knex, retentionSeconds: number, batch: number): Promise<number> {
  const { rows } = await db.raw<{ rows: { deleted: number }[] }>(
    'select prune_availability_changes(?, ?) as deleted',
    [retentionSeconds, batch],
  );
  return rows[0]!.deleted;
}

/** Why an operator's change makes partners fetch availability again. */
export type RangeReason = 'blackout' | 'price_rule' | 'venue_status' | 'resource';

/**
 * Records an operator's change as a `range` (record_availability_range()): venue-local dates from
 * `from` to `to`, each, when null, the venue's today and today + max_advance_days.
 */
export async function recordRange(
  trx: Knex,
  change: {
    venueId: string;
    resourceId: string | null;
    from: string | null;
    to: string | null;
    reason: RangeReason;
  },
): Promise<void> {
  await trx.raw('select record_availability_range(?, ?, ?::date, ?::date, ?)', [
    change.venueId,
    change.resourceId,
    change.from,
    change.to,
    change.reason,
  ]);
}

/**
 * Records a blackout's range: the venue-local dates of its first and last instant (its end is
 * exclusive), on its resource or (null) the whole venue.
 */
export async function recordBlackoutRange(
  trx: Knex,
  blackout: { venueId: string; resourceId: string | null; from: Date; to: Date },
): Promise<void> {
  await trx.raw(
    `select record_availability_range(v.id, ?, (?::timestamptz at time zone v.timezone)::date,
                                      ((?::timestamptz - interval '1 microsecond') at time zone v.timezone)::date,
                                      'blackout')
       from venues v where v.id = ?`,
    [blackout.resourceId, blackout.from, blackout.to, blackout.venueId],
  );
}

/** How long a stream row lives without its process touching it: a dead process's streams go then. */
export const STREAM_ROW_TTL_SECONDS = 60;

/**
 * Opens a stream's row when the partner has fewer than `limit` live ones (across every web
 * process): the partner's rows are counted under a transaction-scoped lock on the partner, so two
 * processes opening at once cannot both take the last place. Whether it was opened.
 */
export async function openStream(
  db: Knex,
  stream: { id: string; partnerId: string; processId: string },
  limit: number,
): Promise<boolean> {
  return db.transaction(async (trx) => {
    await trx.raw('select pg_advisory_xact_lock(hashtextextended(?, 0))', [
      `availability-streams:${stream.partnerId}`,
    ]);
    const { rows } = await trx.raw<{ rows: { n: number }[] }>(
      `select count(*)::int as n from availability_streams
        where partner_id = ? and seen_at > now() - make_interval(secs => ?)`,
      [stream.partnerId, STREAM_ROW_TTL_SECONDS],
    );
    if (rows[0]!.n >= limit) return false;
    await trx('availability_streams').insert({
      id: stream.id,
      partner_id: stream.partnerId,
      process_id: stream.processId,
    });
    return true;
  });
}

/** Frees a stream's place. */
export async function closeStream(db: Knex, id: string): Promise<void> {
  await db('availability_streams').where({ id }).delete();
}

/** Frees every place of a process's streams (a stopping process). */
export async function closeProcessStreams(db: Knex, processId: string): Promise<void> {
  await db('availability_streams').where({ process_id: processId }).delete();
}

/** Marks a process's open streams alive, and forgets its rows that are no longer open. */
export async function touchStreams(db: Knex, processId: string, openIds: readonly string[]): Promise<void> {
  await db.raw(
    `with seen as (update availability_streams set seen_at = now() where process_id = ? and id = any (?::uuid[]))
     delete from availability_streams where process_id = ? and id <> all (?::uuid[])`,
    [processId, [...openIds], processId, [...openIds]],
  );
}

/** Of these streams, those whose partner may no longer see their venue or whose key stopped working. */
export async function revokedStreams(
  db: Knex,
  streams: readonly { id: string; partnerId: string; venueId: string; keyHash: string }[],
): Promise<string[]> {
  if (streams.length === 0) return [];
  const { rows } = await db.raw<{ rows: { id: string }[] }>(
    `select s.id from jsonb_to_recordset(?::jsonb) as s(id text, partner_id uuid, venue_id uuid, key_hash text)
      where not venue_authorized(s.partner_id, s.venue_id)
         or not exists (select from api_keys k where k.key_hash = s.key_hash and api_key_is_live(k))`,
    [
      JSON.stringify(
        streams.map((s) => ({ id: s.id, partner_id: s.partnerId, venue_id: s.venueId, key_hash: s.keyHash })),
      ),
    ],
  );
  return rows.map((r) => r.id);
}
