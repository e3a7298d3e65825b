/**
 * Cursors of the availability change feed. A cursor names a place in the one log of every venue's
 * changes: after a change (its position, in base 36: the `changes_cursor` of a snapshot, a poll's
 * `next_after`, a stream's `hello`), or after one event of a change (`<position>-<k>`, every
 * event's own `cursor`). Opaque to partners, tied to no venue, partner or filter, and always
 * containing a digit or a letter, as the contract asks.
 */
import type { FeedPosition } from '../../db/queries/availability-changes.ts';

/**
 * The header a stream's resume cursor comes in, as every refusal names it (CONTRACT.md: `details`
 * has `in: header` with field `Last-Event-ID`), whatever case the client wrote it in.
 */
export const LAST_EVENT_ID = 'Last-Event-ID';

/** What a cursor may look like: what this service writes, and nothing else. */
const SHAPE = /^[0-9a-z]{1,13}(-[0-9a-z]{1,4})?$/;

/** The cursor after a change (`k` null) or after one of its events. */
export function cursorOf(position: FeedPosition): string {
  const head = position.position.toString(36);
  return position.k === null ? head : `${head}-${position.k.toString(36)}`;
}

/** The place a cursor names, or undefined when this service could not have written it. */
export function parseCursor(cursor: string): FeedPosition | undefined {
  if (!SHAPE.test(cursor)) return undefined;
  const [head, tail] = cursor.split('-') as [string, string | undefined];
  let position = 0n;
  for (const digit of head) position = position * 36n + BigInt(parseInt(digit, 36));
  if (position > 2n ** 62n) return undefined;
  const k = tail === undefined ? null : parseInt(tail, 36);
  // Position 0 is the empty log's: no change, so no event, has it.
  if (position === 0n && k !== null) return undefined;
  // Written without leading zeros: another spelling of the same place was not written here.
  if (cursorOf({ position, k }) !== cursor) return undefined;
  return { position, k };
}

/** Whether `event` (a change's position and its place in it) comes after `after`. */
export function isAfter(event: { position: bigint; k: number }, after: FeedPosition): boolean {
  return (
    event.position > after.position ||
    (event.position === after.position && after.k !== null && event.k > after.k)
  );
}
