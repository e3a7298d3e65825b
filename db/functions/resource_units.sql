-- resource_units(resource): the physical units a resource occupies, in a fixed order: its parts
-- when it is convertible (a full pitch made of two halves), else itself. Reservations are made per
-- unit, so the exclusion constraint on (unit, window) keeps a whole and its parts apart.
-- PL/pgSQL so that its statement's plan is kept per connection (plan_cache_mode = generic): as a
-- SQL function with a subquery it is never inlined, and was planned on every call (0.1–0.2 ms).
create or replace function resource_units(p_resource_id uuid) returns uuid[]
language plpgsql stable
set plan_cache_mode = force_generic_plan
as $$
begin
  return coalesce(
    (select array_agg(part_id order by part_id) from resource_parts where resource_id = p_resource_id),
    array[p_resource_id]);
end
$$;
