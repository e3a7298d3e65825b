/**
 * Retention on large tables: BENCH_RETENTION_ROWS (default 1,000,000) events and as many
 * idempotency keys older than RETENTION_DAYS, beside 100,000 recent events, pruned by the job's
 * own code (`retentionPrune`) while a writer keeps recording events and claiming keys, as a
 * running service would. Reports the time, the rounds and what the writer waited: a round's
 * deletes are short transactions, so the writer should not notice them.
 */
import { randomUUID } from 'node:crypto';
import type { Knex } from '../../db/postgres/knex.ts';
import { loadConfig } from '../../db/platform/config.ts';
import { createLogger } from '../../db/platform/log.ts';
import { retentionPrune, RETENTION_BATCH } from '../../workers/retention-prune.ts';
import { benchPartners, benchVenue, msSince, percentile } from './harness.ts';

const RECENT_EVENTS = 100_000;

export async function benchRetention(url: string, db: Knex, rows: number): Promise<string> {
  const venueId = await benchVenue(db, 'Retention', { courts: 1 });
  const { partnerId } = (await benchPartners(db, venueId, 1))[0]!;
  const fill = Date.now();
  await db.raw(
    `insert into events (event_type, venue_id, partner_id, slot_id, occurred_at)
     select 'hold_created', ?, ?, gen_random_uuid(), now() - interval '40 days' + n * interval '1 ms'
       from generate_series(1, ?) n`,
    [venueId, partnerId, rows],
  );
  await db.raw(
    `insert into idempotency_keys (partner_id, key, operation, fingerprint, created_at)
     select ?, 'old-' || n, 'hold', 'f', now() - interval '40 days' from generate_series(1, ?) n`,
    [partnerId, rows],
  );
  await db.raw(
    `insert into events (event_type, venue_id, partner_id, slot_id, occurred_at)
     select 'hold_created', ?, ?, gen_random_uuid(), now() - interval '1 day' from generate_series(1, ?)`,
    [venueId, partnerId, RECENT_EVENTS],
  );
  // What a deployment's autovacuum would have done by the time the rows are 30 days old.
  await db.raw('vacuum analyze events, idempotency_keys');
  const fillSeconds = (Date.now() - fill) / 1000;

  // The writer: an event and a key at a time, as holds would write them, measured throughout.
  const waits: number[] = [];
  let writing = true;
  const writer = (async () => {
    while (writing) {
      const started = process.hrtime.bigint();
      await db.transaction(async (trx) => {
        await trx('events').insert({
          event_type: 'hold_created',
          venue_id: venueId,
          partner_id: partnerId,
          slot_id: randomUUID(),
        });
        await trx('idempotency_keys').insert({
          partner_id: partnerId,
          key: randomUUID(),
          operation: 'hold',
          fingerprint: 'f',
        });
      });
      waits.push(msSince(started));
    }
  })();

  // The job's own handler (it needs no pg-boss and no job).
  const before = await counts(db);
  const deps = {
    db,
    boss: undefined as never,
    config: loadConfig({ DATABASE_URL: url }),
    log: createLogger('silent'),
  };
  const started = process.hrtime.bigint();
  await retentionPrune.handle({}, deps, undefined as never);
  const seconds = msSince(started) / 1000;
  writing = false;
  await writer;

  const after = await counts(db);
  const deleted = { events: before.old - after.old, keys: before.keys - after.keys };
  // Each round deletes up to a batch per table; the last finds less and ends the job.
  const rounds = Math.floor(Math.max(deleted.events, deleted.keys) / RETENTION_BATCH) + 1;
  return [
    `${rows.toLocaleString('en')} old events and ${rows.toLocaleString('en')} old idempotency keys beside ${RECENT_EVENTS.toLocaleString('en')} recent events (filled in ${fillSeconds.toFixed(1)} s)`,
    '',
    '| deleted events / keys | seconds | rounds | ms per round | left old / recent events / old keys | writer transactions | writer p50 / p99 / max ms |',
    '| --- | ---: | ---: | ---: | --- | ---: | --- |',
    `| ${deleted.events} / ${deleted.keys} | ${seconds.toFixed(1)} | ${rounds} | ${((seconds * 1000) / rounds).toFixed(1)} | ${after.old} / ${after.recent} / ${after.keys} | ${waits.length} | ${percentile(waits, 50)} / ${percentile(waits, 99)} / ${percentile(waits, 100)} |`,
  ].join('\n');
}

/** Events older and younger than 30 days, and idempotency keys older. */
async function counts(db: Knex): Promise<{ old: number; recent: number; keys: number }> {
  const { rows } = await db.raw<{ rows: { old: number; recent: number; keys: number }[] }>(
    `select count(*) filter (where occurred_at < now() - interval '30 days')::int as old,
            count(*) filter (where occurred_at >= now() - interval '30 days')::int as recent,
            (select count(*)::int from idempotency_keys where created_at < now() - interval '30 days') as keys
       from events`,
  );
  return rows[0]!;
}
