/**
 * The availability streams of one web process (GET /slots/availability/stream), and the one reader
 * of the change log that serves all of them.
 *
 * - **One reader.** Every 500 ms, while any stream is open, the hub positions what has committed
 *   (sequence_availability_changes()) and reads, in one query, the new events of every venue a
 *   stream watches. It keeps them, each framed once, in a log per venue shared by all that venue's
 *   streams, each event with its slot's state as last read (VenueLog). No query per stream, no
 *   database connection held by a stream, no NOTIFY.
 * - **Each stream at its own pace.** A stream writes the shared log's events after its cursor
 *   while its socket takes them; when the socket is full it waits for it to drain, and nothing
 *   more is buffered for it. A stream whose cursor lies before what the log holds (a resume from
 *   an old cursor, a client far behind) reads its own pages from the database first, one at a time
 *   and a few streams at a time. Each event is written once: a stream only takes events after the
 *   last one it wrote.
 * - **Bounded.** The shared logs hold at most LOG_BYTES of events in all (the oldest go first); a
 *   client that has not read for 30 s is disconnected. Streams end after 30 minutes (the client
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
import { isDatabaseUnavailable } from '../../db/postgres/pg-errors.ts';
import * as feed from '../../db/queries/availability-changes.ts';
import { cursorOf, isAfter } from './cursor.ts';

/**
 * How often the hub positions and reads the change log, and so how often a stream with events
 * waiting writes them. Each tick costs a read (positioning included) and one write per stream with
 * something new, whatever the number of events: with 1,000 streams at 20 holds/s, ticks every
 * 500 ms cost the web a quarter to a third less CPU per event than every 250 ms (`npm run bench
 * stream`, docs/BENCHMARKS.md), and an event still reaches its streams within ~0.6 s of its commit
 * (the contract allows 2 s).
 */
const TICK_MS = 500;
/** How often it checks access and marks its streams alive. */
const HOUSEKEEPING_MS = 5_000;
/** Events the hub reads at a time. */
const READ_BATCH = 5_000;
/** Events a stream behind the shared log reads from the database at a time. */
const PAGE = 500;
/** Streams of this process reading their own pages from the database at once. */
const PAGE_READERS = 2;
/** What the shared logs of all venues hold at most (their events' frames), oldest dropped first. */
const LOG_BYTES = 16 * 1024 * 1024;
/** What a stream hands its socket in one write at most. */
const WRITE_BYTES = 64 * 1024;
/** A client that has not read for this long is disconnected. */
const STALLED_MS = 30_000;
/** Streams end after this long; the client resumes. */
const MAX_AGE_MS = 30 * 60_000;
/**
 * How long a reserved place waits for its stream (the request's last checks take milliseconds):
 * one a request never attached is then forgotten, and housekeeping frees its row.
 */
const RESERVED_MS = 30_000;

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

/**
 * An event as a stream writes it: its place in the log, its resource, and its frame, bytes
 * `start` to `end` of a buffer shared with the events read beside it (a stream at their first
 * writes the run of them as one slice of that buffer, whatever number of streams write it).
 */
interface Framed {
  position: bigint;
  k: number;
  resourceId: string | null;
  /** The slot of a `slot` event; null for a `range` event. */
  slotId: string | null;
  /** Where its frame lies (a later read may frame it again: VenueLog.add()). */
  buffer: Buffer;
  start: number;
  end: number;
}

/**
 * The events of one venue the hub has read, in log order, each framed once for all its streams,
 * and each with its slot's state as of the latest read that found an event of that slot: such a
 * read frames the slot's older events again with the state it read (CONTRACT.md: an event carries
 * the slot's state when it is sent, so a stream resuming from here is sent what a poll would list).
 * A slot changes otherwise only with time (a slot starting, a hold past its expiry before its job)
 * and with an operator's change, which yields a `range` event and no slot events: a read that finds
 * one forgets what came before it, and a stream behind that reads its own pages from the database.
 */
class VenueLog {
  readonly events: Framed[] = [];
  bytes = 0;
  streams = 0;
  /**
   * Every event of the venue after this place is here (until the hub has read once for the venue:
   * undefined). It moves on as old events are dropped.
   */
  complete: feed.FeedPosition | undefined;
  /** The events held here of each slot, oldest first. */
  private readonly bySlot = new Map<string, Framed[]>();

  /**
   * Adds the events one query read after `from` (framed together, `framed[i]` of `read[i]`): each
   * slot's older events take its state as read now.
   */
  add(read: readonly feed.FeedEvent[], framed: readonly Framed[], from: feed.FeedPosition): void {
    if (read.some((e) => e.event.type === 'range')) this.forget(from);
    for (const [i, event] of framed.entries()) {
      this.events.push(event);
      this.bytes += event.end - event.start;
      if (event.slotId === null) continue;
      const older = this.bySlot.get(event.slotId);
      if (!older) {
        this.bySlot.set(event.slotId, [event]);
        continue;
      }
      for (const old of older) if (old.buffer !== event.buffer) this.reframe(old, read[i]!.event);
      older.push(event);
    }
  }

  /** Gives `old` the state of a later event of its slot, under its own cursor. */
  private reframe(old: Framed, state: feed.FeedEvent['event']): void {
    const buffer = Buffer.from(frame('slot', cursorOf(old), state));
    this.bytes += buffer.length - (old.end - old.start);
    old.buffer = buffer;
    old.start = 0;
    old.end = buffer.length;
  }

  /** Forgets every event: from here on the log holds what comes after `from`. */
  private forget(from: feed.FeedPosition): void {
    this.events.length = 0;
    this.bySlot.clear();
    this.bytes = 0;
    this.complete = from;
  }

  /** The index of the first event after `after`. */
  indexAfter(after: feed.FeedPosition): number {
    let low = 0;
    let high = this.events.length;
    while (low < high) {
      const mid = (low + high) >>> 1;
      if (isAfter(this.events[mid]!, after)) high = mid;
      else low = mid + 1;
    }
    return low;
  }

  /** Drops the oldest events until at most `bytes` are left. */
  trim(bytes: number): number {
    let dropped = 0;
    let freed = 0;
    while (dropped < this.events.length && this.bytes - freed > bytes) {
      const event = this.events[dropped]!;
      freed += event.end - event.start;
      dropped++;
    }
    if (dropped === 0) return 0;
    const last = this.events[dropped - 1]!;
    for (const event of this.events.splice(0, dropped)) {
      if (event.slotId === null) continue;
      const older = this.bySlot.get(event.slotId)!;
      older.shift(); // the oldest of its slot, as it is the oldest of the log
      if (older.length === 0) this.bySlot.delete(event.slotId);
    }
    this.bytes -= freed;
    this.complete = { position: last.position, k: last.k };
    return freed;
  }
}

class Stream {
  readonly id = randomUUID();
  readonly openedAt = Date.now();
  after: feed.FeedPosition;
  /** Writing (from the shared log or from its own pages): one pump at a time. */
  pumping = false;
  /** The socket did not take the last write at once: wait for it to drain. */
  blocked = false;
  closed = false;
  /** When it last wrote, and since when its socket has been full (the hub's tick checks both). */
  private wroteAt = Date.now();
  private blockedAt = 0;

  readonly start: StreamStart;
  private readonly res: ServerResponse;
  private readonly onClose: (stream: Stream) => void;
  private readonly onDrain: (stream: Stream) => void;

  constructor(
    start: StreamStart,
    res: ServerResponse,
    handlers: { onClose: (stream: Stream) => void; onDrain: (stream: Stream) => void },
  ) {
    this.start = start;
    this.res = res;
    this.onClose = handlers.onClose;
    this.onDrain = handlers.onDrain;
    this.after = start.after;
    res.on('drain', () => {
      this.blocked = false;
      this.onDrain(this);
    });
    res.on('close', () => this.close());
  }

  /** Writes `text`; false when the socket could not take it at once (the stream is then blocked). */
  write(text: string | Buffer, now = Date.now()): boolean {
    if (this.closed) return false;
    const took = this.res.write(text);
    this.wroteAt = now;
    if (!took && !this.blocked) {
      this.blocked = true;
      this.blockedAt = now;
    }
    return took;
  }

  /**
   * The hub's timers, without one per stream: a keep-alive after `keepAliveMs` of silence, and the
   * end of a client that has not read for `stalledMs` (it is cut off rather than waited for).
   */
  check(now: number, keepAliveMs: number, stalledMs: number): void {
    if (this.closed) return;
    if (this.blocked && now - this.blockedAt >= stalledMs) this.destroy();
    else if (now - this.wroteAt >= keepAliveMs) this.write(': keep-alive\n\n', now);
  }

  /** Writes these events, in log order (its cursor moves past the last). */
  send(events: readonly Framed[]): void {
    if (events.length === 0) return;
    const last = events.at(-1)!;
    this.after = { position: last.position, k: last.k };
    this.write(bytesOf(events));
  }

  /** Whether an event is one this stream sends (its resource, or the whole venue). */
  wants(event: Framed): boolean {
    return (
      this.start.resourceId === null ||
      event.resourceId === null ||
      event.resourceId === this.start.resourceId
    );
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
    this.onClose(this);
  }
}

/** What the hub needs of the process. */
export interface HubDeps {
  db: Knex;
  config: Config;
  log: Logger;
  metrics: Metrics;
  /** How long a client may go without reading before it is cut off (tests shorten it). */
  stalledMs?: number;
}

export class StreamHub {
  /** This process's name in the rows of open streams. */
  readonly processId = randomUUID();
  private readonly streams = new Map<string, Stream>();
  /** The row (its place in the per-partner limit) of each open stream. */
  private readonly rows = new Map<string, string>();
  /**
   * Rows reserved for streams not attached yet (their requests still check the cursor), and when:
   * housekeeping keeps them, as it forgets this process's rows of no open stream.
   */
  private readonly reserved = new Map<string, number>();
  /** The shared log of each venue an open stream watches. */
  private readonly venues = new Map<string, VenueLog>();
  /** Every event of the watched venues up to here has been read into their logs. */
  private position: bigint | undefined;
  private ticking: Promise<void> | undefined;
  private timers: NodeJS.Timeout[] = [];
  /** Streams waiting for a turn to read their own pages, and how many read now. */
  private readonly pageQueue: (() => void)[] = [];
  private pageReaders = 0;
  /** Set once the process stops: a stream that starts then ends at once. */
  private stopping = false;
  /** Places being freed now (the process's stop waits for them before its pool closes). */
  private readonly freeing = new Set<Promise<void>>();

  private readonly deps: HubDeps;

  constructor(deps: HubDeps) {
    this.deps = deps;
  }

  /**
   * Opens a stream's row if the partner has a place left (5 across every process). Its id counts as
   * reserved before the row is written, so that no housekeeping pass under way deletes it.
   */
  async reserve(partnerId: string, limit: number): Promise<string | undefined> {
    const id = randomUUID();
    this.reserved.set(id, Date.now());
    let opened = false;
    try {
      opened = await feed.openStream(this.deps.db, { id, partnerId, processId: this.processId }, limit);
    } finally {
      if (!opened) this.reserved.delete(id);
    }
    return opened ? id : undefined;
  }

  /** Frees a place reserved for a stream that did not start. */
  release(rowId: string): void {
    this.reserved.delete(rowId);
    const freed = feed
      .closeStream(this.deps.db, rowId)
      .catch((err: unknown) => this.warn(err, 'could not free a stream place'))
      .finally(() => this.freeing.delete(freed));
    this.freeing.add(freed);
  }

  /**
   * Starts a stream on `res` (its headers already sent): `retry`, its first event, then what comes
   * after its cursor, at the pace the client reads.
   */
  attach(rowId: string, start: StreamStart, req: IncomingMessage, res: ServerResponse): void {
    this.reserved.delete(rowId);
    // A HEAD has its headers and nothing more (Node drops a HEAD response's writes, so a stream
    // would hold its place and never send a byte). A client gone while its stream was being opened
    // closed before anything listened for it: its place would wait for the stall limit.
    if (this.stopping || req.method === 'HEAD' || req.socket.destroyed || res.destroyed) {
      res.end();
      this.release(rowId);
      return;
    }
    const stream = new Stream(start, res, {
      onClose: (s) => this.closed(s, rowId),
      onDrain: (s) => void this.pump(s),
    });
    this.streams.set(stream.id, stream);
    this.rows.set(stream.id, rowId);
    let log = this.venues.get(start.venueId);
    if (!log) {
      // The hub's next read reads it from where that read starts (log.complete).
      log = new VenueLog();
      this.venues.set(start.venueId, log);
    }
    log.streams++;
    this.deps.metrics.availabilityStreams.set(this.streams.size);
    req.socket.setNoDelay(true);
    stream.write(
      'retry: 5000\n\n' +
        frame(start.first.type, start.first.cursor, { ...start.first, venue_id: start.venueId }),
    );
    this.ensureRunning();
    void this.pump(stream);
  }

  /**
   * Ends every stream at once, sending nothing more (a stopping process); resolves once every place
   * of this process is free. The places go in one statement, after the frees already under way: a
   * free still waiting for a connection when the process closes its pool would be dropped, and its
   * place would count against its partner for a minute (until the row is judged dead) while the
   * partner reconnects to another process.
   */
  async endAll(): Promise<void> {
    this.stopping = true;
    for (const timer of this.timers) clearInterval(timer);
    this.timers = [];
    for (const stream of this.streams.values()) stream.end();
    while (this.freeing.size) await Promise.all(this.freeing);
    await feed
      .closeProcessStreams(this.deps.db, this.processId)
      .catch((err: unknown) => this.warn(err, 'could not free the stream places of a stopping process'));
  }

  private closed(stream: Stream, rowId: string): void {
    this.streams.delete(stream.id);
    this.rows.delete(stream.id);
    const log = this.venues.get(stream.start.venueId);
    if (log && --log.streams === 0) this.venues.delete(stream.start.venueId);
    this.deps.metrics.availabilityStreams.set(this.streams.size);
    // A stopping process frees all its places in one statement (endAll()).
    if (!this.stopping) this.release(rowId);
  }

  private ensureRunning(): void {
    if (this.timers.length) return;
    const tick = setInterval(() => {
      const now = Date.now();
      const keepAliveMs = this.deps.config.streamKeepaliveSeconds * 1000;
      const stalledMs = this.deps.stalledMs ?? STALLED_MS;
      for (const stream of this.streams.values()) stream.check(now, keepAliveMs, stalledMs);
      void this.tick();
    }, TICK_MS);
    const housekeeping = setInterval(() => void this.housekeeping(), HOUSEKEEPING_MS);
    tick.unref();
    housekeeping.unref();
    this.timers = [tick, housekeeping];
  }

  /** Reads what has committed into the venues' logs, then lets every stream write what it can. */
  private tick(): Promise<void> {
    if (this.ticking) return this.ticking;
    this.ticking = this.read()
      .then(() => {
        for (const stream of this.streams.values()) void this.pump(stream);
      })
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
    // Venues first watched since the last read are read from here on; one that a stream starts to
    // watch while this read runs waits for the next.
    for (const log of this.venues.values()) log.complete ??= { position: start, k: null };
    const venueIds = [...this.venues.keys()];
    let reached = sequenced > start ? sequenced : start;
    let after: feed.FeedPosition = { position: start, k: null };
    for (;;) {
      const events = await feed.eventsAfter(this.deps.db, venueIds, after, null, READ_BATCH);
      const byVenue = new Map<string, feed.FeedEvent[]>();
      for (const event of events) {
        const list = byVenue.get(event.venueId);
        if (list) list.push(event);
        else byVenue.set(event.venueId, [event]);
      }
      for (const [venueId, list] of byVenue) {
        const log = this.venues.get(venueId);
        if (!log) continue; // its last stream closed meanwhile
        log.add(list, framedAll(list), after);
      }
      if (events.length === 0) break;
      const last = events.at(-1)!;
      if (last.position > reached) reached = last.position;
      if (events.length < READ_BATCH) break;
      after = { position: last.position, k: last.k };
    }
    this.position = reached;
    this.trim();
  }

  /** Keeps the venues' logs within LOG_BYTES together, each venue its share. */
  private trim(): void {
    if (this.venues.size === 0) return;
    const share = Math.floor(LOG_BYTES / this.venues.size);
    for (const log of this.venues.values()) if (log.bytes > share) log.trim(share);
  }

  /**
   * Writes a stream what comes after its cursor while its socket takes it: its own pages from the
   * database while its cursor lies before its venue's log, then the log.
   */
  private async pump(stream: Stream): Promise<void> {
    if (stream.pumping || stream.closed) return;
    stream.pumping = true;
    try {
      while (!stream.closed && !stream.blocked) {
        const log = this.venues.get(stream.start.venueId);
        if (!log?.complete) return; // the hub reads the venue at its next tick, then pumps again
        if (precedes(stream.after, log.complete)) {
          await this.readPage(stream, log.complete);
          continue;
        }
        const from = log.indexAfter(stream.after);
        if (from >= log.events.length) return;
        const batch: Framed[] = [];
        let bytes = 0;
        for (let i = from; i < log.events.length && bytes < WRITE_BYTES; i++) {
          const event = log.events[i]!;
          if (!stream.wants(event)) continue;
          batch.push(event);
          bytes += event.end - event.start;
        }
        if (batch.length === 0) {
          // Nothing of its resource: it has everything up to the log's end.
          const last = log.events.at(-1)!;
          stream.after = { position: last.position, k: last.k };
          return;
        }
        stream.send(batch);
      }
    } catch (err) {
      // The database gone for a while (a restart): the stream keeps its place and reads on once a
      // tick reads again, as the streams at the log's end do. Anything else ends it.
      if (isDatabaseUnavailable(err)) {
        this.warn(err, 'an availability stream waits for the database to catch up');
        return;
      }
      this.warn(err, 'an availability stream could not catch up');
      stream.end();
    } finally {
      stream.pumping = false;
    }
  }

  /**
   * One page of a stream's events from the database, when its cursor lies before `complete` (where
   * its venue's log starts). A page that is not full leaves nothing before `complete`: the stream
   * then reads on from there.
   */
  private async readPage(stream: Stream, complete: feed.FeedPosition): Promise<void> {
    await this.pageTurn();
    try {
      if (stream.closed) return;
      const events = await feed.eventsAfter(
        this.deps.db,
        [stream.start.venueId],
        stream.after,
        stream.start.resourceId,
        PAGE,
      );
      if (stream.closed) return;
      stream.send(framedAll(events));
      if (events.length < PAGE && precedes(stream.after, complete)) {
        stream.after = complete;
      }
    } finally {
      this.pageTurnDone();
    }
  }

  /** Waits for one of PAGE_READERS turns to read from the database. */
  private pageTurn(): Promise<void> {
    if (this.pageReaders < PAGE_READERS) {
      this.pageReaders++;
      return Promise.resolve();
    }
    return new Promise((resolve) => this.pageQueue.push(resolve));
  }

  private pageTurnDone(): void {
    const next = this.pageQueue.shift();
    if (next) next();
    else this.pageReaders--;
  }

  /** Access checks, old streams, and the liveness of this process's stream rows. */
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
      for (const [id, at] of this.reserved) if (now - at > RESERVED_MS) this.reserved.delete(id);
      await feed.touchStreams(this.deps.db, this.processId, [...this.rows.values(), ...this.reserved.keys()]);
    } catch (err) {
      this.warn(err, 'could not check availability streams');
    }
  }

  private warn(err: unknown, message: string): void {
    this.deps.log.warn({ err: err instanceof Error ? err.message : String(err) }, message);
  }
}

/** Whether place `a` lies before place `b` in the log. */
function precedes(a: feed.FeedPosition, b: feed.FeedPosition): boolean {
  // A place after a whole change lies after every event of it.
  return isAfter({ position: b.position, k: b.k ?? Number.MAX_SAFE_INTEGER }, a);
}

/** Events framed once, for every stream that sends them: one buffer, each its bytes of it. */
function framedAll(events: readonly feed.FeedEvent[]): Framed[] {
  const frames = events.map((e) => frame(e.event.type, cursorOf(e), e.event));
  const buffer = Buffer.from(frames.join(''));
  let start = 0;
  return events.map((event, i) => {
    const end = start + Buffer.byteLength(frames[i]!);
    const framed = {
      position: event.position,
      k: event.k,
      resourceId: event.event.resource_id,
      slotId: event.event.type === 'slot' ? (event.event.slot_id as string) : null,
      buffer,
      start,
      end,
    };
    start = end;
    return framed;
  });
}

/** The bytes of events in log order: one slice where they lie side by side in one buffer. */
function bytesOf(events: readonly Framed[]): Buffer {
  const slices: Buffer[] = [];
  let run = events[0]!;
  let end = run.end;
  for (let i = 1; i < events.length; i++) {
    const event = events[i]!;
    if (event.buffer === run.buffer && event.start === end) {
      end = event.end;
      continue;
    }
    slices.push(run.buffer.subarray(run.start, end));
    run = event;
    end = event.end;
  }
  slices.push(run.buffer.subarray(run.start, end));
  return slices.length === 1 ? slices[0]! : Buffer.concat(slices);
}

/** One Server-Sent Event: its id (a cursor), its type, and its JSON on one data line. */
function frame(type: string, cursor: string, data: object): string {
  return `id: ${cursor}\nevent: ${type}\ndata: ${JSON.stringify({ ...data, type, cursor })}\n\n`;
}
