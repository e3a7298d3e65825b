/**
 * Recurring series: a weekly window on one resource, held as one hold group
 * (db/functions/place_series.sql). A series is its pattern as created and one row per occurrence:
 * its venue-local date, its window (none when the date's grid has no start at the wall-clock time),
 * what became of it at creation (HELD, SKIPPED with its reason, EXCLUDED) and, when held, its hold,
 * whose booking and state say what it is now. A series' holds and bookings name their series and
 * occurrence, so that their events say them without a lookup. Venues get a series window of their own
 * (`ops venue:series-window`), null until set: the venue's max_advance_days then.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    alter table venues add column series_max_advance_days integer
      check (series_max_advance_days between 0 and 730);
    create table series (
      id uuid primary key default gen_random_uuid(),
      partner_id uuid not null references partners (id),
      venue_id uuid not null references venues (id),
      resource_id uuid not null references resources (id),
      hold_group_id uuid not null unique references hold_groups (id),
      timezone text not null,
      first_date date not null,
      start_time time not null,
      slot_duration_minutes integer not null check (slot_duration_minutes between 15 and 1440),
      count smallint not null check (count between 2 and 26),
      interval_weeks smallint not null check (interval_weeks between 1 and 4),
      price_rupees integer not null,
      created_at timestamptz not null default now()
    );
    create index series_partner_idx on series (partner_id);
    create table series_occurrences (
      series_id uuid not null references series (id),
      occurrence_index smallint not null,
      local_date date not null,
      slot_start timestamptz,
      slot_end timestamptz,
      utc_offset text,
      created_status text not null check (created_status in ('HELD', 'SKIPPED', 'EXCLUDED')),
      reason text,
      price_rupees integer,
      hold_id uuid unique references holds (id),
      primary key (series_id, occurrence_index),
      check ((created_status = 'HELD') = (hold_id is not null))
    );
    -- A series' holds and bookings carry their series and occurrence, for what their events say.
    alter table holds add column series_id uuid references series (id),
                      add column series_occurrence_index smallint,
                      add constraint holds_occurrence_in_series
                        check ((series_id is null) = (series_occurrence_index is null));
    alter table bookings add column series_occurrence_index smallint;
    -- A group names the series it holds, and the series its group: the group is inserted first.
    alter table hold_groups add constraint hold_groups_series_id_fkey
      foreign key (series_id) references series (id) deferrable initially deferred;
    alter table bookings add constraint bookings_series_id_fkey foreign key (series_id) references series (id);
  `);
}

export async function down(knex: Knex): Promise<void> {
  // The functions only the files create that take rows of these tables go first.
  await knex.raw(`
    drop function if exists place_series(text, uuid, text, text, uuid, text, date, time, integer, integer, integer,
                                         date[], text, text, integer);
    drop function if exists series_json(uuid);
    alter table bookings drop constraint bookings_series_id_fkey, drop column series_occurrence_index;
    alter table holds drop constraint holds_occurrence_in_series, drop column series_occurrence_index,
                      drop column series_id;
    alter table hold_groups drop constraint hold_groups_series_id_fkey;
    drop table series_occurrences;
    drop table series;
    alter table venues drop column series_max_advance_days;
  `);
}
