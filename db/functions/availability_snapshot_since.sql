-- availability_snapshot_since(partner, venue, date, one resource?, resource, known position, known
-- snapshot, known until): GET /slots/availability in one statement, for a web process that keeps
-- the grids it sent (api/use-cases/kept-availability.ts). The partner's access and the resource
-- come first (check_availability_access()), on every call. Then:
--
-- - Given a grid read before (the snapshot it was read in and the change log's position there, and
--   until when time alone leaves it as it was, in epoch milliseconds), when that grid still stands
--   (now is before `known until`, and availability_unchanged()): one row, `unchanged` true, with
--   this snapshot and the change log's last position in it, which the grid is now exact at (so its
--   `changes_cursor`, and what to give as known next time).
-- - Otherwise the grid (venue_availability(): a row per resource with its slots as lists), then a
--   last row with the snapshot and the change log's last position in it, `unchanged` false, and
--   what the caller needs to keep it: now, the venue's lead time, and until when time alone leaves
--   it as it is (availability_valid_until(), in epoch milliseconds; the lead time is the caller's
--   to apply to the slots it got).
--
-- One snapshot for all of it (a stable function's statements share its caller's), so the feed after
-- the position lists every change the grid may not show (a change committed before the snapshot but
-- positioned after it is listed again, harmlessly) and none it had listed before.
--
-- requires: check_availability_access, venue_availability, availability_last_position,
--   availability_unchanged, availability_valid_until
create or replace function availability_snapshot_since(
  p_partner_id uuid, p_venue_id uuid, p_date date, p_one_resource boolean, p_resource_id uuid,
  p_known_position bigint, p_known_snapshot pg_snapshot, p_known_until_ms double precision
) returns table (
  resource_id uuid, starts_ms text, ends_ms text, prices text, available text, changes_position bigint,
  snapshot text, unchanged boolean, now_ms double precision, lead_minutes integer, valid_until_ms double precision
)
language plpgsql stable as $$
#variable_conflict use_column
begin
  if p_known_position is not null then
    perform check_availability_access(p_partner_id, p_venue_id, p_one_resource, p_resource_id);
    if date_part('epoch', now()) * 1000 < p_known_until_ms
       and availability_unchanged(p_venue_id, p_date, p_known_position, p_known_snapshot) then
      return query select null::uuid, null::text, null::text, null::text, null::text,
                          availability_last_position(), pg_current_snapshot()::text, true, null::float8,
                          null::integer, null::float8;
      return;
    end if;
  end if;
  return query
    select a.resource_id, a.starts_ms, a.ends_ms, a.prices, a.available, null::bigint, null::text,
           null::boolean, null::float8, null::integer, null::float8
      from venue_availability(p_partner_id, p_venue_id, p_date, p_one_resource, p_resource_id) a;
  return query
    select null::uuid, null::text, null::text, null::text, null::text, availability_last_position(),
           pg_current_snapshot()::text, false, date_part('epoch', now()) * 1000, v.min_lead_minutes,
           date_part('epoch', availability_valid_until(p_venue_id, p_date)) * 1000
      from venues v where v.id = p_venue_id;
end
$$;
