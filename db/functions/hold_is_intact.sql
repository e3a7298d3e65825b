-- hold_is_intact(h): the hold still has a live reservation on every unit of its resource; a confirm
-- of a hold that lost one is DOUBLE_BOOKING_ATTEMPT (the slot changed between hold and confirm).
--
-- PL/pgSQL so that its statement's plan is kept per connection (plan_cache_mode = generic): as a
-- SQL function with a subquery it is never inlined, and was planned on every call (0.1–0.2 ms).
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
