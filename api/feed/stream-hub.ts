/**
 * The availability streams of one web process (GET /slots/availability/stream), and the one reader
 * of the change log that serves all of them.
 *
 * - **One reader.** Every 250 ms the hub positions what has committed
 *   (sequence_availability_changes()) and, when any stream is live, reads the events after its
 *   position of every venue a live stream watches, in one query, then writes each live stream its
 *   events in one write. No query per stream, no database connection held by a stream, no NOTIFY.
 * - **Catching up.** A stream that starts behind the hub (a resume cursor, or a client that stopped
 *   reading) reads its own pages from its cursor, one page at a time and the next only once its
 *   socket has drained, until it has everything up to where the hub stands; then it is live. Each
 *   event is written once: a live stream only takes events after the last one it wrote.
 * - **Bounded.** A write the socket cannot take at once stops live writes to that stream (it
 *   catches up from its cursor when the socket drains), so nothing is buffered for a slow client;
 *   a client that has not read for 30 s is disconnected. Streams end after 30 minutes (the client
 *   resumes with Last-Event-ID), and at once on shutdown, sending nothing more.
 * - **Access.** Every 5 s the hub checks, in one query, that each stream's partner may still see
 *   its venue and that its key still works; a stream that lost either gets `access_revoked` and
 *   ends. It also marks its streams' rows alive, so the per-partner limit counts them across
 *   processes, and a dead process's rows stop counting after a minute.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Config } from '../../db/platform/config.ts';
import type { Logger } from '../../db/platform/log.ts';
import type { Metrics } from '../../db/platform/metrics.ts';
import type { Knex } from '../../db/postgres/knex.ts';
import * as feed from '../../db/queries/availability-changes.ts';
import { cursorOf, isAfter } from './cursor.ts';

/** How often the hub positions and reads the change log. */
const TICK_MS = 250;
/** How often it checks access and marks its streams alive. */
const HOUSEKEEPING_MS = 5_000;
/** Events a catching-up stream reads at a time. */
const PAGE = 200;
/** Events the hub reads at a time for its live streams. */
const LIVE_BATCH = 5_000;
/** A client that has not read for this long is disconnected. */
const STALLED_MS = 30_000;
/** Streams end after this long; the client resumes. */
const MAX_AGE_MS = 30 * 60_000;

/** Where a stream starts: the first event it sends and the place after which it reads. */
export interface StreamStart {
  partnerId: string;
  venueId: string;
  resourceId: string | null;
  /** The hash of the key it was opened with, checked every few seconds. */
  keyHash: string;
  first:
    { type: 'hello'; cursor: string } | { type: 'resync_required'; cursor: string; reason: 'cursor_expired' };
  after: feed.FeedPosition;
}

class Stream {
  readonly id = randomUUID();
  readonly openedAt = Date.now();
  after: feed.FeedPosition;
  live = false;
  catchingUp = false;
  blocked = false;
  closed = false;
  private keepAlive: NodeJS.Timeout;
  private drained: (() => void) | undefined;

  readonly start: StreamStart;
  private readonly res: ServerResponse;
  private readonly onClose: (stream: Stream) => void;

  constructor(
    start: StreamStart,
    res: ServerResponse,
    keepAliveMs: number,
    onClose: (stream: Stream) => void,
  ) {
    this.start = start;
    this.res = res;
    this.onClose = onClose;
    this.after = start.after;
    this.keepAlive = setTimeout(() => this.write(': keep-alive\n\n'), keepAliveMs);
    this.keepAlive.unref();
    res.on('drain', () => {
      this.blocked = false;
      this.drained?.();
    });
    res.on('close', () => this.close());
  }

  /** Writes `text`; false when the socket could not take it at once (the stream is then blocked). */
  write(text: string): boolean {
    if (this.closed) return false;
    const took = this.res.write(text);
    this.keepAlive.refresh();
    if (!took) this.blocked = true;
    return took;
  }

  /** Writes events (and moves the stream's cursor past the last). */
  send(events: readonly feed.FeedEvent[], text: (event: feed.FeedEvent) => string): boolean {
    if (events.length === 0) return true;
    this.after = { position: events.at(-1)!.position, k: events.at(-1)!.k };
    return this.write(events.map(text).join(''));
  }

  /** Resolves when the socket has drained, or after `ms` (false: it did not). */
  drain(ms: number): Promise<boolean> {
    if (!this.blocked || this.closed) return Promise.resolve(!this.closed);
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.drained = undefined;
        resolve(false);
      }, ms);
      this.drained = () => {
        clearTimeout(timer);
        this.drained = undefined;
        resolve(true);
      };
    });
  }

  /** Ends the response (after `last`, when given) and frees the stream's place. */
  end(last?: string): void {
    if (this.closed) return;
    if (last) this.res.write(last);
    this.res.end();
    this.close();
  }

  /** Cuts the connection of a client that does not read. */
  destroy(): void {
    this.res.destroy();
    this.close();
  }

  private close(): void {
    if (this.closed) return;
    this.closed = true;
    clearTimeout(this.keepAlive);
    this.drained?.();
    this.onClose(this);
  }
}

/** What the hub needs of the process. */
export interface HubDeps {
  db: Knex;
  config: Config;
  log: Logger;
  metrics: Metrics;
}

export class StreamHub {
  /** This process's name in the rows of open streams. */
  readonly processId = randomUUID();
  private readonly streams = new Map<string, Stream>();
  /** The row (its place in the per-partner limit) of each open stream. */
  private readonly rows = new Map<string, string>();
  /** Every event up to here has been written to every stream that was live when it was read. */
  private position: bigint | undefined;
  private ticking: Promise<void> | undefined;
  private timers: NodeJS.Timeout[] = [];
  /** Set once the process stops: a stream that starts then ends at once. */
  private stopping = false;

  private readonly deps: HubDeps;

  constructor(deps: HubDeps) {
    this.deps = deps;
  }

  /** Opens a stream's row if the partner has a place left (5 across every process). */
  reserve(partnerId: string, limit: number): Promise<string | undefined> {
    const id = randomUUID();
    return feed
      .openStream(this.deps.db, { id, partnerId, processId: this.processId }, limit)
      .then((opened) => (opened ? id : undefined));
  }

  /** Frees a place reserved for a stream that did not start. */
  release(rowId: string): void {
    feed
      .closeStream(this.deps.db, rowId)
      .catch((err: unknown) => this.warn(err, 'could not free a stream place'));
  }

  /**
   * Starts a stream on `res` (its headers already sent): `retry`, its first event, then what comes
   * after its cursor, caught up and then live.
   */
  attach(rowId: string, start: StreamStart, req: IncomingMessage, res: ServerResponse): void {
    if (this.stopping) {
      res.end();
      this.release(rowId);
      return;
    }
    const stream = new Stream(start, res, this.deps.config.streamKeepaliveSeconds * 1000, (s) =>
      this.closed(s, rowId),
    );
    this.streams.set(stream.id, stream);
    this.rows.set(stream.id, rowId);
    this.deps.metrics.availabilityStreams.set(this.streams.size);
    req.socket.setNoDelay(true);
    stream.write(
      'retry: 5000\n\n' +
        frame(start.first.type, start.first.cursor, { ...start.first, venue_id: start.venueId }),
    );
    this.ensureRunning();
    void this.catchUp(stream);
  }

  /** Ends every stream at once, sending nothing more (a stopping process). */
  endAll(): void {
    this.stopping = true;
    for (const timer of this.timers) clearInterval(timer);
    this.timers = [];
    for (const stream of this.streams.values()) stream.end();
  }

  private closed(stream: Stream, rowId: string): void {
    this.streams.delete(stream.id);
    this.rows.delete(stream.id);
    this.deps.metrics.availabilityStreams.set(this.streams.size);
    this.release(rowId);
  }

  private ensureRunning(): void {
    if (this.timers.length) return;
    const tick = setInterval(() => void this.tick(), TICK_MS);
    const housekeeping = setInterval(() => void this.housekeeping(), HOUSEKEEPING_MS);
    tick.unref();
    housekeeping.unref();
    this.timers = [tick, housekeeping];
  }

  /** Positions what has committed, and writes each live stream what came after it. */
  private tick(): Promise<void> {
    if (this.ticking) return this.ticking;
    this.ticking = this.read()
      .catch((err: unknown) => this.warn(err, 'could not read availability changes'))
      .finally(() => {
        this.ticking = undefined;
      });
    return this.ticking;
  }

  private async read(): Promise<void> {
    if (this.streams.size === 0) {
      for (const timer of this.timers) clearInterval(timer);
      this.timers = [];
      this.position = undefined;
      return;
    }
    const sequenced = await feed.sequence(this.deps.db);
    const start = this.position ?? sequenced;
    const live = [...this.streams.values()].filter((s) => s.live && !s.closed);
    const venues = [...new Set(live.map((s) => s.start.venueId))];
    let reached = sequenced > start ? sequenced : start;
    let after: feed.FeedPosition = { position: start, k: null };
    for (;;) {
      if (venues.length === 0) break;
      const events = await feed.eventsAfter(this.deps.db, venues, after, null, LIVE_BATCH);
      this.dispatch(events);
      if (events.length === 0) break;
      const last = events.at(-1)!;
      if (last.position > reached) reached = last.position;
      if (events.length < LIVE_BATCH) break;
      after = { position: last.position, k: last.k };
    }
    this.position = reached;
  }

  /** Writes events to the live streams they concern; a stream that cannot take them catches up. */
  private dispatch(events: readonly feed.FeedEvent[]): void {
    if (events.length === 0) return;
    const texts = new Map<feed.FeedEvent, string>();
    const text = (event: feed.FeedEvent) => {
      let made = texts.get(event);
      if (made === undefined) {
        made = frame(event.event.type, cursorOf(event), event.event);
        texts.set(event, made);
      }
      return made;
    };
    for (const stream of this.streams.values()) {
      if (!stream.live || stream.closed) continue;
      const mine = events.filter(
        (e) =>
          e.venueId === stream.start.venueId &&
          (stream.start.resourceId === null ||
            e.event.resource_id === null ||
            e.event.resource_id === stream.start.resourceId) &&
          isAfter(e, stream.after),
      );
      if (stream.blocked) {
        // Nothing is buffered for a client that is not reading: it reads its pages once it drains.
        stream.live = false;
        void this.catchUp(stream);
        continue;
      }
      if (!stream.send(mine, text)) {
        stream.live = false;
        void this.catchUp(stream);
      }
    }
  }

  /**
   * Reads a stream's pages from its cursor, each once its socket has drained, until it has written
   * everything up to where the hub stands; then the stream is live.
   */
  private async catchUp(stream: Stream): Promise<void> {
    if (stream.catchingUp) return;
    stream.catchingUp = true;
    try {
      while (!stream.closed) {
        if (!(await stream.drain(STALLED_MS))) {
          stream.destroy();
          return;
        }
        const sequenced = await feed.sequence(this.deps.db);
        const events = await feed.eventsAfter(
          this.deps.db,
          [stream.start.venueId],
          stream.after,
          stream.start.resourceId,
          PAGE,
        );
        if (stream.closed) return;
        stream.send(events, (e) => frame(e.event.type, cursorOf(e), e.event));
        if (events.length === PAGE) continue;
        const last = events.at(-1)?.position ?? 0n;
        const reached = last > sequenced ? last : sequenced;
        // Live only once the hub stands no further than this (and is not reading right now):
        // then every event after it reaches the stream from the hub, each once.
        if (this.ticking) await this.ticking;
        if (stream.closed) return;
        if (!stream.blocked && (this.position === undefined || this.position <= reached)) {
          if (reached > stream.after.position) stream.after = { position: reached, k: null };
          // The hub reads on from here when it had not read yet (no stream was live).
          this.position ??= reached;
          stream.live = true;
          return;
        }
      }
    } catch (err) {
      this.warn(err, 'an availability stream could not catch up');
      stream.end();
    } finally {
      stream.catchingUp = false;
    }
  }

  /** Access checks, old and stalled streams, and the liveness of this process's stream rows. */
  private async housekeeping(): Promise<void> {
    const now = Date.now();
    const open = [...this.streams.values()].filter((s) => !s.closed);
    for (const stream of open) {
      if (now - stream.openedAt >= MAX_AGE_MS) stream.end();
    }
    try {
      const revoked = new Set(
        await feed.revokedStreams(
          this.deps.db,
          open.map((s) => ({
            id: s.id,
            partnerId: s.start.partnerId,
            venueId: s.start.venueId,
            keyHash: s.start.keyHash,
          })),
        ),
      );
      for (const stream of open) {
        if (!revoked.has(stream.id) || stream.closed) continue;
        const cursor = cursorOf(stream.after);
        stream.end(
          frame('access_revoked', cursor, { type: 'access_revoked', cursor, venue_id: stream.start.venueId }),
        );
      }
      await feed.touchStreams(this.deps.db, this.processId, this.rowIds());
    } catch (err) {
      this.warn(err, 'could not check availability streams');
    }
  }

  private rowIds(): string[] {
    return [...this.rows.values()];
  }

  private warn(err: unknown, message: string): void {
    this.deps.log.warn({ err: err instanceof Error ? err.message : String(err) }, message);
  }
}

/** One Server-Sent Event: its id (a cursor), its type, and its JSON on one data line. */
function frame(type: string, cursor: string, data: object): string {
  return `id: ${cursor}\nevent: ${type}\ndata: ${JSON.stringify({ ...data, type, cursor })}\n\n`;
}
