/** The availability change feed: poll it, or have it streamed as Server-Sent Events. */
import { z } from 'zod';
import { CursorExpiredError, StreamLimitReachedError, VenueNotAuthorizedError } from '../errors.ts';
import { cursorOf, LAST_EVENT_ID } from '../feed/cursor.ts';
import { defineRoute, EventStream } from '../route.ts';
import { ChangesQuery, ChangesResponse, StreamQuery } from '../schemas/availability-changes.ts';
import { readChanges, startStream } from '../use-cases/read-availability-changes.ts';

const tag = 'Availability';
const venueId = '3f1c2a9e-8d7b-4c55-9a0e-2b6f4d8e1a73';
const slotEvent = {
  type: 'slot',
  cursor: '2lk9-0',
  venue_id: venueId,
  slot_id: '5b1f3c7e-2d4a-5e8b-9c1d-7f2a4b6c8d0e',
  resource_id: '9b2d7c1e-4f3a-4e8b-b1c6-5d0a7e9f2c48',
  slot_start: '2026-11-23T00:30:00.000Z',
  slot_end: '2026-11-23T01:30:00.000Z',
  price_rupees: 500,
  is_available: false,
  held_until: '2026-11-22T10:45:00.000Z',
};
const rangeEvent = {
  type: 'range',
  cursor: '2lkb-0',
  venue_id: venueId,
  resource_id: null,
  from: '2026-11-22',
  to: '2026-12-13',
  reason: 'venue_status',
};

/** Seconds a poller should wait before polling again when it has read everything. */
export const POLL_INTERVAL_SECONDS = 5;

export const availabilityChangeRoutes = [
  defineRoute({
    method: 'GET',
    path: '/slots/availability/changes',
    operationId: 'listAvailabilityChanges',
    summary: 'Poll the availability change feed',
    description:
      'The events after `after`, oldest first: a `slot` event for every grid slot a hold, release, expiry, ' +
      'confirm, cancel or refund affected (its state as availability shows it now, and `held_until`), and a ' +
      '`range` event for each operator change (fetch those dates again). Start from a GET /slots/availability ' +
      '`changes_cursor`; continue from `next_after`, waiting `X-Poll-Interval` seconds when `has_more` is ' +
      'false. The log never skips: a transaction that commits late is listed after every cursor already handed ' +
      'out. 410 CURSOR_EXPIRED when the feed no longer holds what followed `after`: fetch availability again.',
    tag,
    auth: true,
    query: ChangesQuery,
    responses: {
      200: {
        description: 'A page of events.',
        schema: ChangesResponse,
        example: { data: [slotEvent, rangeEvent], next_after: '2lkb', has_more: false },
        headers: {
          'X-Poll-Interval': {
            description: 'Seconds to wait before the next poll when has_more is false.',
            schema: { type: 'integer' },
          },
        },
      },
    },
    errors: [VenueNotAuthorizedError, CursorExpiredError],
    async handler({ partnerId, query }, { db, config }) {
      const page = await readChanges(db, config, partnerId, query);
      return {
        status: 200,
        headers: { 'X-Poll-Interval': String(POLL_INTERVAL_SECONDS) },
        body: {
          data: page.events.map((e) => ({ ...e.event, cursor: cursorOf(e) })),
          next_after: page.nextAfter,
          has_more: page.hasMore,
        },
      };
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/slots/availability/stream',
    operationId: 'streamAvailabilityChanges',
    summary: 'Stream the availability change feed (Server-Sent Events)',
    description:
      'The change feed as Server-Sent Events: `retry: 5000`, then `hello` (or `resync_required` when the resume ' +
      'cursor has expired: fetch availability again), then the same `slot` and `range` events, in the same order ' +
      'and with the same cursors as a poll, each once: the replay after the resume cursor, then live. Each event ' +
      'is `id: <cursor>`, `event: <type>` and one `data:` line of JSON. Resume with the `Last-Event-ID` header ' +
      '(or `last_event_id`); without one the stream starts at the current position. `: keep-alive` comments ' +
      'fill silences. The stream sends `access_revoked` and ends when you lose the venue or your key stops ' +
      'working, and ends after 30 minutes or when you stop reading for 30 s: reconnect with Last-Event-ID. At ' +
      'most 5 open streams per partner (429 STREAM_LIMIT_REACHED). Opening one counts one request.',
    tag,
    auth: true,
    query: StreamQuery,
    requestHeaders: {
      [LAST_EVENT_ID]: {
        description:
          'Where to resume: any cursor `after` takes (an event’s `id` as the stream sent it). Wins over ' +
          '`last_event_id`; an empty value counts as absent.',
        schema: { type: 'string', maxLength: 64 },
      },
    },
    responses: {
      200: {
        description: 'The stream.',
        schema: z.string().meta({ description: 'Server-Sent Events.' }),
        mediaTypes: ['text/event-stream'],
        example:
          'retry: 5000\n\nid: 2lk8\nevent: hello\ndata: {"type":"hello","cursor":"2lk8","venue_id":"' +
          venueId +
          '"}\n\nid: 2lk9-0\nevent: slot\ndata: ' +
          JSON.stringify(slotEvent) +
          '\n\n: keep-alive\n\n',
      },
    },
    errors: [VenueNotAuthorizedError, StreamLimitReachedError],
    async handler({ partnerId, query, headers }, { db, config, streams }) {
      const { rowId, start } = await startStream({ db, config, streams: streams! }, partnerId, {
        query,
        headers,
      });
      return { status: 200, body: new EventStream((req, res) => streams!.attach(rowId, start, req, res)) };
    },
  }),
];
