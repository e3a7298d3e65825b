-- hold_is_intact(h): the hold still has a live reservation on every unit of its resource; a confirm
-- of a hold that lost one is DOUBLE_BOOKING_ATTEMPT (the slot changed between hold and confirm).
--
-- requires: reservation_is_live, resource_units
create or replace function hold_is_intact(h holds) returns boolean
language plpgsql stable
set plan_cache_mode = force_generic_plan
as $$
begin
  return (select count(*) from reservations rv where rv.hold_id = h.id and reservation_is_live(rv))
         = cardinality(resource_units(h.resource_id));
end
$$;
