/**
 * What a web process keeps of the availability grids it sent (api/use-cases/kept-availability.ts):
 * until when time alone leaves a grid as read (the lead time, slot by slot), and the bound on what
 * is kept.
 */
import test from 'ava';
import { randomUUID } from 'node:crypto';
import {
  forgetKeptGrids,
  keepGrid,
  keptGrid,
  keptSize,
  MAX_KEPT_BYTES,
  MAX_KEPT_MS,
  validUntil,
  type KeptGrid,
} from '../../api/use-cases/kept-availability.ts';

const MINUTE = 60_000;

function read(starts: number[], options: { nowMs: number; leadMinutes: number; validUntilMs: number }) {
  return {
    unchanged: false as const,
    snapshot: '1:1:',
    grid: {
      days: [
        {
          times: { resourceId: randomUUID(), starts, ends: starts.map((s) => s + 30 * MINUTE) },
          prices: starts.map(() => 500),
          available: starts.map(() => true),
        },
      ],
      changesPosition: 1n,
    },
    ...options,
  };
}

test('a grid stands until the first slot that can still be held comes within the lead time', (t) => {
  const now = Date.UTC(2026, 10, 28, 10, 0);
  const S = 1000;
  const starts = [now - 30 * S, now + 150 * S, now + 90 * S, now + 30 * S];
  // Lead 1 min: the slot at +30 s is inside it already (and stays so); the one at +90 s leaves at +30 s.
  t.is(validUntil(read(starts, { nowMs: now, leadMinutes: 1, validUntilMs: Infinity })), now + 30 * S);
  // Lead 2 min: only the slot at +150 s can be held; it stops at +30 s as well.
  t.is(validUntil(read(starts, { nowMs: now, leadMinutes: 2, validUntilMs: Infinity })), now + 30 * S);
  // No lead time: a slot can be held until it starts.
  t.is(
    validUntil(read([now + 150 * S, now + 40 * S], { nowMs: now, leadMinutes: 0, validUntilMs: Infinity })),
    now + 40 * S,
  );
  // What the database found first wins.
  t.is(validUntil(read(starts, { nowMs: now, leadMinutes: 0, validUntilMs: now + 5 * S })), now + 5 * S);
  // A slot whose edge is exactly now cannot be held now, nor ever again: the next one decides.
  t.is(
    validUntil(read([now + 60 * S, now + 100 * S], { nowMs: now, leadMinutes: 1, validUntilMs: Infinity })),
    now + 40 * S,
  );
  // A grid nothing will change stands for MAX_KEPT_MS, and so does one whose changes lie beyond it.
  t.is(
    validUntil(read([now - 60 * S], { nowMs: now, leadMinutes: 0, validUntilMs: Infinity })),
    now + MAX_KEPT_MS,
  );
  t.is(
    validUntil(read([now + MAX_KEPT_MS + S], { nowMs: now, leadMinutes: 0, validUntilMs: Infinity })),
    now + MAX_KEPT_MS,
  );
});

test('kept grids stay under MAX_KEPT_BYTES, the least recently sent going first', (t) => {
  forgetKeptGrids();
  const grid = (mib: number): KeptGrid => ({
    bytes: Buffer.alloc(mib * 1024 * 1024),
    changesPosition: 1n,
    snapshot: '1:1:',
    validUntilMs: Infinity,
  });
  const quarter = MAX_KEPT_BYTES / 4 / 1024 / 1024;
  keepGrid('a', grid(quarter), undefined);
  keepGrid('b', grid(quarter), undefined);
  keepGrid('c', grid(quarter), undefined);
  t.truthy(keptGrid('a')); // now the most recently sent
  keepGrid('d', grid(quarter), undefined);
  t.is(keptSize().grids, 3, 'b went: the four and their entries are over the bound');
  t.falsy(keptGrid('b'));
  t.truthy(keptGrid('a'));
  t.true(keptSize().bytes <= MAX_KEPT_BYTES);
  // One grid larger than the bound is not kept, and takes nothing else out.
  keepGrid('e', grid(MAX_KEPT_BYTES / 1024 / 1024 + 1), undefined);
  t.falsy(keptGrid('e'));
  t.is(keptSize().grids, 3);
});

test('a grid kept by another request meanwhile is not replaced by one of an older question', (t) => {
  forgetKeptGrids();
  const make = (position: bigint): KeptGrid => ({
    bytes: Buffer.from('{}'),
    changesPosition: position,
    snapshot: '1:1:',
    validUntilMs: Infinity,
  });
  const first = make(1n);
  keepGrid('k', first, undefined);
  const oneEntry = keptSize().bytes;
  const asked = keptGrid('k');
  keepGrid('k', make(5n), asked); // another request answered first
  keepGrid('k', make(3n), asked); // this one asked about the same grid: it stays as it is now
  t.is(keptGrid('k')!.changesPosition, 5n);
  t.is(keptSize().bytes, oneEntry, 'one entry counted, not three');
  t.is(keptSize().grids, 1);
  forgetKeptGrids();
  t.deepEqual(keptSize(), { grids: 0, bytes: 0 });
});
