/**
 * The missed-event pull reads what a page needs, however long the venue's history (issue: a rare
 * `types` value or an old `since` read the whole history). Measured in rows, not time: the
 * transaction's own counters of tuples read from `events` (pg_stat_xact_user_tables).
 */
import test from 'ava';
import { pullEvents, type EventPullFilters } from '../../db/queries/events.ts';
import { useTestDatabase } from '../helpers/database.ts';
import { makePartner, makeVenue } from '../helpers/factories.ts';
import { waitFor } from '../helpers/wait.ts';

const database = useTestDatabase(test);

/** Events of one venue, a minute apart, ending an hour ago: every 4,000th is booking_refunded. */
const HISTORY = 20_000;

test('a page of the pull reads about as many rows as it lists, at any depth of history', async (t) => {
  const { db } = database();
  const { partnerId } = await makePartner(db);
  const venueId = await makeVenue(db, { grantTo: [partnerId] });
  await db.raw(
    `insert into events (event_type, venue_id, partner_id, slot_id, occurred_at, recorded_at)
     select case when i % 4000 = 0 then 'booking_refunded' else 'hold_created' end, ?, ?, gen_random_uuid(),
            now() - interval '1 hour' - (? - i) * interval '1 minute',
            now() - interval '1 hour' - (? - i) * interval '1 minute' + interval '5 ms'
       from generate_series(1, ?) i`,
    [venueId, partnerId, HISTORY, HISTORY, HISTORY],
  );
  await db.raw('analyze events');
  // The pull serves an event once every transaction older than it has ended, on the whole server:
  // another test file's open transaction may hold the history back for a moment.
  await waitFor(
    async () =>
      (
        await db.raw<{ rows: { served: boolean }[] }>(
          `select max(tx) < pg_snapshot_xmin(pg_current_snapshot()) as served from events where venue_id = ?`,
          [venueId],
        )
      ).rows[0]!.served,
    { timeout: 30_000 },
  );
  const deep = await db('events')
    .where({ venue_id: venueId })
    .orderBy('seq')
    .offset(HISTORY - 500)
    .first();

  const measure = async (filters: EventPullFilters, after?: { tx: string; seq: string }) =>
    db.transaction(async (trx) => {
      // The backend's counts not yet flushed, which may include earlier transactions': a difference.
      const counted = async () => {
        const { rows } = await trx.raw<{ rows: { n: string }[] }>(
          `select coalesce(seq_tup_read, 0) + coalesce(idx_tup_fetch, 0) as n
             from pg_stat_xact_user_tables where relname = 'events'`,
        );
        return Number(rows[0]!.n);
      };
      const before = await counted();
      const rows = await pullEvents(trx, partnerId, filters, after);
      return { listed: rows.length, read: (await counted()) - before };
    });

  const rare = await measure({ limit: 50, types: ['booking_refunded'] });
  t.is(rare.listed, HISTORY / 4000);
  t.true(rare.read < 100, `a rare type read ${rare.read} rows`);
  const since = await measure({ limit: 50, since: deep.occurred_at });
  t.is(since.listed, 50);
  t.true(since.read < 300, `an old since read ${since.read} rows`);
  const both = await measure({
    limit: 50,
    since: deep.occurred_at,
    types: ['booking_refunded', 'hold_created'],
  });
  t.is(both.listed, 50);
  t.true(both.read < 500, `since with types read ${both.read} rows`);
  const page = await measure({ limit: 50 }, { tx: String(deep.tx), seq: String(deep.seq) });
  t.is(page.listed, 50);
  t.true(page.read < 100, `a page deep in the history read ${page.read} rows`);
});
