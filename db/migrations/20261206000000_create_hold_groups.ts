/**
 * Hold groups: several windows at one venue held all or nothing, then confirmed or released as one
 * (db/functions/place_hold_group.sql, confirm_hold_group.sql). A group is a row of its own; its
 * holds are ordinary holds that name it and their place in it, and its bookings name it too, so
 * that every event of a grouped hold or its booking can say which group it belongs to. `series_id`
 * names the series a group holds (a later migration gives it its table), null until then.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    create table hold_groups (
      id uuid primary key default gen_random_uuid(),
      partner_id uuid not null references partners (id),
      venue_id uuid not null references venues (id),
      series_id uuid,
      status text not null default 'ACTIVE' check (status in ('ACTIVE', 'CONFIRMED', 'CANCELLED', 'EXPIRED')),
      hold_expiry_at timestamptz not null,
      price_rupees integer not null,
      customer_phone text,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now(),
      confirmed_at timestamptz,
      cancelled_at timestamptz,
      cancel_reason text,
      expired_at timestamptz
    );
    create index hold_groups_partner_idx on hold_groups (partner_id);
    alter table holds add column hold_group_id uuid references hold_groups (id),
                      add column item_index smallint,
                      add constraint holds_item_in_group check ((hold_group_id is null) = (item_index is null));
    create index holds_group_idx on holds (hold_group_id, item_index) where hold_group_id is not null;
    alter table bookings add column hold_group_id uuid references hold_groups (id),
                         add column series_id uuid;
    create index bookings_series_idx on bookings (series_id, booked_at desc, id desc) where series_id is not null;
  `);
}

export async function down(knex: Knex): Promise<void> {
  // The functions only the files create that take rows of a table (a hold group's, a venue's, a
  // resource's) go first, so that this migration and those before can drop the tables.
  await knex.raw(`
    drop function if exists place_hold_group(text, uuid, text, text, uuid, jsonb, text);
    drop function if exists confirm_hold_group(text, uuid, text, text, uuid, text, text, text, text, boolean);
    drop function if exists hold_group_json(uuid);
    drop function if exists hold_group_items(hold_groups, uuid[], timestamptz[], integer[], integer[], integer,
                                             integer[]);
    drop function if exists record_hold_events(text, uuid[], text);
    drop function if exists record_booking_events(text, uuid[], text);
    drop function if exists record_events(text, jsonb, text);
    drop function if exists window_rule_refusal(venues, resources, timestamptz, integer, integer);
    drop function if exists window_price(venues, resources, timestamptz, integer, integer);
    drop index bookings_series_idx;
    alter table bookings drop column series_id, drop column hold_group_id;
    drop index holds_group_idx;
    alter table holds drop constraint holds_item_in_group, drop column item_index, drop column hold_group_id;
    drop table hold_groups;
  `);
}
