/**
 * `venue_slots()` unions what is taken on each resource's units in one pass: the units of every
 * resource joined to the live pieces (booked time per unit and UTC day, running holds) by unit,
 * then grouped by resource. It scanned every live piece of the venue once per resource instead
 * (43 × 80 for the load harness's venue day), which made a venue's grid cost about 0.65 ms more
 * once it had any booking; this pass costs about 0.45 ms (docs/BENCHMARKS.md). Same rows out.
 */
import type { Knex } from 'knex';
import { replaceInFunction } from '../postgres/function-definition.ts';

const VENUE_SLOTS = 'venue_slots(uuid, date, uuid, timestamptz, timestamptz)';

const PER_RESOURCE_SCAN = `      ), rt as materialized (
        -- Per resource, once: the union of what blocks it. A slot then costs one && each.
        select r.*,
          (select range_agg(l.taken) from live l where l.unit_id = any (r.units)) as taken,`;

const ONE_PASS = `      ), taken as materialized (
        -- What is taken per resource: its units' live pieces, found by unit in one join.
        select ru.id, range_agg(l.taken) as taken
        from (select r.id, unnest(r.units) as unit_id from r) ru
        join live l on l.unit_id = ru.unit_id
        group by ru.id
      ), rt as materialized (
        -- Per resource, once: the union of what blocks it. A slot then costs one && each.
        select r.*,
          (select t.taken from taken t where t.id = r.id) as taken,`;

export async function up(knex: Knex): Promise<void> {
  await replaceInFunction(knex, VENUE_SLOTS, PER_RESOURCE_SCAN, ONE_PASS);
}

export async function down(knex: Knex): Promise<void> {
  await replaceInFunction(knex, VENUE_SLOTS, ONE_PASS, PER_RESOURCE_SCAN);
}
