-- window_conflict(resource, units, window): what a live reservation overlapping the window says of
-- it, or null: TAKEN when one is the resource's own (an unexpired ACTIVE hold or a BOOKED booking,
-- the caller's included), else TRANSFORMATION_CONFLICT when one is of a resource sharing a unit
-- with it (a convertible whole and its parts). Reservations of holds past their expiry are not
-- live: they block nobody (window_overdue_holds() names them, for expiring first).
--
-- requires: reservation_is_live
create or replace function window_conflict(p_resource_id uuid, p_units uuid[], p_during tstzrange) returns text
language sql stable as $$
  select case when bool_or(r.resource_id = p_resource_id) then 'TAKEN'
              when count(*) > 0 then 'TRANSFORMATION_CONFLICT' end
    from reservations r
   where r.active and r.unit_id = any (p_units) and r.during && p_during and reservation_is_live(r)
$$;
