/**
 * The availability change feed (GET /slots/availability/changes) and the start of a stream
 * (GET /slots/availability/stream): the checks both make, in order — the cursor's shape (400), the
 * venue (403), the resource (400), that this service could have written the cursor (400: a position
 * past the log's end) — then, for a poll, its expiry (410) and a page; for a stream, its place
 * among the partner's 5 (429) and where it starts.
 */
import { hashApiKey } from '../../db/rules/api-key.ts';
import type { Config } from '../../db/platform/config.ts';
import type { Knex } from '../../db/postgres/knex.ts';
import * as feed from '../../db/queries/availability-changes.ts';
import * as resources from '../../db/queries/resources.ts';
import * as venues from '../../db/queries/venues.ts';
import {
  CursorExpiredError,
  InvalidFieldError,
  StreamLimitReachedError,
  ValidationError,
  VenueNotAuthorizedError,
  type InputLocation,
} from '../errors.ts';
import { cursorOf, LAST_EVENT_ID, parseCursor } from '../feed/cursor.ts';
import type { StreamHub, StreamStart } from '../feed/stream-hub.ts';

/** Open streams a partner may have, across every web process. */
export const STREAMS_PER_PARTNER = 5;
/** What a refused stream is told to wait, in seconds: a closed stream frees its place within 5. */
const STREAM_RETRY_SECONDS = 5;

/** A page of the feed. */
export interface ChangesPage {
  events: feed.FeedEvent[];
  nextAfter: string;
  hasMore: boolean;
}

/** A page of the events after `after` at a venue (one resource's, when given). */
export async function readChanges(
  db: Knex,
  config: Config,
  partnerId: string,
  query: { venue_id: string; after: string; resource_id?: string | undefined; limit: number },
): Promise<ChangesPage> {
  const after = parseCursor(query.after);
  if (!after) throw invalidCursor('after', 'query');
  await checkAccess(db, partnerId, query.venue_id, query.resource_id, 'query');
  const last = await feed.sequence(db);
  if (after.position > last) throw invalidCursor('after', 'query');
  if (await feed.cursorExpired(db, query.venue_id, after, config.availabilityChangesRetentionSeconds)) {
    throw new CursorExpiredError();
  }
  const events = await feed.eventsAfter(
    db,
    [query.venue_id],
    after,
    query.resource_id ?? null,
    query.limit + 1,
  );
  const hasMore = events.length > query.limit;
  const page = events.slice(0, query.limit);
  const lastEvent = page.at(-1);
  let nextAfter: string;
  if (hasMore) nextAfter = cursorOf(lastEvent!);
  else {
    // The feed's position: after the whole of its last change, so past the last event listed (also
    // when `after` lies within that change) and past the other venues' changes already scanned.
    const reached = lastEvent && lastEvent.position > last ? lastEvent.position : last;
    nextAfter = cursorOf({ position: reached, k: null });
  }
  return { events: page, nextAfter, hasMore };
}

/**
 * Where a stream starts, once every check has passed and its place among the partner's streams is
 * taken (its row; the hub frees it when the stream ends): at the resume cursor (Last-Event-ID, else
 * `last_event_id`; an expired one starts with resync_required at the current position), or live at
 * the current position.
 */
export async function startStream(
  { db, config, streams }: { db: Knex; config: Config; streams: StreamHub },
  partnerId: string,
  request: {
    query: { venue_id: string; resource_id?: string | undefined; last_event_id?: unknown };
    headers: Readonly<Record<string, string | string[] | undefined>>;
  },
): Promise<{ rowId: string; start: StreamStart }> {
  const header = request.headers['last-event-id'];
  if (Array.isArray(header)) throw invalidCursor(LAST_EVENT_ID, 'header');
  // The header when sent (the query value is then ignored, whatever it is), else the query; an
  // empty value counts as absent.
  const query = request.query.last_event_id;
  const where: [string, InputLocation] = header ? [LAST_EVENT_ID, 'header'] : ['last_event_id', 'query'];
  const resume = header || (query === '' ? undefined : query);
  if (resume !== undefined && typeof resume !== 'string') throw invalidCursor(...where);
  const position = resume === undefined ? undefined : parseCursor(resume);
  if (resume !== undefined && !position) throw invalidCursor(...where);
  const venueId = request.query.venue_id;
  await checkAccess(db, partnerId, venueId, request.query.resource_id, 'query');
  const last = await feed.sequence(db);
  if (position && position.position > last) throw invalidCursor(...where);
  const rowId = await streams.reserve(partnerId, STREAMS_PER_PARTNER);
  if (!rowId) throw new StreamLimitReachedError(STREAMS_PER_PARTNER, STREAM_RETRY_SECONDS);
  const now: feed.FeedPosition = { position: last, k: null };
  const expired =
    position !== undefined &&
    (await feed
      .cursorExpired(db, venueId, position, config.availabilityChangesRetentionSeconds)
      .catch((err: unknown) => {
        streams.release(rowId); // no stream will start on it
        throw err;
      }));
  const key = request.headers['x-api-key'];
  return {
    rowId,
    start: {
      partnerId,
      venueId,
      resourceId: request.query.resource_id ?? null,
      keyHash: hashApiKey(String(key).toLowerCase()),
      first:
        position === undefined
          ? { type: 'hello', cursor: cursorOf(now) }
          : expired
            ? { type: 'resync_required', cursor: cursorOf(now), reason: 'cursor_expired' }
            : { type: 'hello', cursor: resume! },
      after: position === undefined || expired ? now : position,
    },
  };
}

/** The venue is the partner's (403), and the resource, when given, one of its (400). */
async function checkAccess(
  db: Knex,
  partnerId: string,
  venueId: string,
  resourceId: string | undefined,
  location: InputLocation,
): Promise<void> {
  if (!(await venues.findVisible(db, partnerId, venueId))) throw new VenueNotAuthorizedError();
  if (resourceId !== undefined && !(await resources.findOfVenue(db, venueId, resourceId))) {
    throw location === 'query'
      ? new ValidationError([
          { field: 'resource_id', in: 'query', message: 'is not a resource of this venue' },
        ])
      : new InvalidFieldError('resource_id', 'is not a resource of this venue');
  }
}

function invalidCursor(field: string, location: InputLocation): ValidationError {
  return new ValidationError([
    {
      field,
      in: location,
      message: 'is not a cursor of this feed (a changes_cursor, a next_after or an event’s cursor)',
    },
  ]);
}
