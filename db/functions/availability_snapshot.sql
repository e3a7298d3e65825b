-- availability_snapshot(partner, venue, date, one resource?, resource): venue_availability() and the
-- change log's last position read in one statement, so in one snapshot: the feed after that
-- position lists every change the slots may not show (a change committed before the snapshot but
-- positioned after it is listed again, harmlessly), and none it had listed before. The position
-- comes as a row of its own, its resource null (there is one even when no slot is shown).
--
-- requires: venue_availability, availability_last_position
create or replace function availability_snapshot(
  p_partner_id uuid, p_venue_id uuid, p_date date, p_one_resource boolean, p_resource_id uuid
) returns table (
  resource_id uuid, starts_ms text, ends_ms text, prices text, available text, changes_position bigint
)
language sql stable as $$
  select a.resource_id, a.starts_ms, a.ends_ms, a.prices, a.available, null::bigint
    from venue_availability(p_partner_id, p_venue_id, p_date, p_one_resource, p_resource_id) a
  union all
  select null, null, null, null, null, availability_last_position()
$$;
