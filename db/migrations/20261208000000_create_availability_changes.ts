/**
 * The availability change log (db/functions/record_availability_change.sql and its kin): one row per
 * transaction that changes what availability shows, recorded in that transaction without a position;
 * `sequence_availability_changes()` gives committed rows their positions afterwards, in one order,
 * so a transaction that commits late is positioned after everything already handed out (positions
 * follow commits, not inserts). Retention deletes old rows and remembers, per venue, the last
 * position it deleted (a cursor before it has expired). Open streams are rows too, so that the
 * per-partner limit counts every web process.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    create sequence availability_change_position as bigint;
    create table availability_changes (
      id bigint generated always as identity primary key,
      venue_id uuid not null,
      position bigint,
      recorded_at timestamptz not null default clock_timestamp(),
      recorded_xid xid8 not null default pg_current_xact_id(),
      kind text not null check (kind in ('slot', 'range')),
      resource_ids uuid[],
      windows tstzrange[],
      range_resource_id uuid,
      from_date date,
      to_date date,
      reason text check (reason in ('blackout', 'price_rule', 'venue_status', 'resource')),
      check ((kind = 'slot') = (windows is not null))
    );
    create index availability_changes_unpositioned_idx on availability_changes (recorded_xid) where position is null;
    -- Every transaction below this one has ended, and its changes are positioned: the sequencer
    -- looks for changes without a position only from here (its index keeps the entries of rows
    -- already positioned until a vacuum, and they are not read again).
    create table availability_change_sequencer (
      one boolean primary key default true check (one),
      watermark xid8 not null
    );
    insert into availability_change_sequencer (watermark) values ('0');
    create unique index availability_changes_position_idx on availability_changes (position) where position is not null;
    create index availability_changes_venue_position_idx on availability_changes (venue_id, position)
      where position is not null;
    create index availability_changes_venue_recorded_idx on availability_changes (venue_id, recorded_at);
    create table availability_change_purges (
      venue_id uuid primary key,
      through_position bigint not null
    );
    create table availability_streams (
      id uuid primary key,
      partner_id uuid not null,
      process_id text not null,
      opened_at timestamptz not null default now(),
      seen_at timestamptz not null default now()
    );
    create index availability_streams_partner_idx on availability_streams (partner_id, seen_at);
    create index availability_streams_process_idx on availability_streams (process_id);
  `);
}

export async function down(knex: Knex): Promise<void> {
  // The functions only the files create that take rows of these tables go first.
  await knex.raw(`
    drop function if exists availability_change_events(availability_changes[]);
    drop table availability_streams;
    drop table availability_change_sequencer;
    drop table availability_change_purges;
    drop table availability_changes;
    drop sequence availability_change_position;
  `);
}
