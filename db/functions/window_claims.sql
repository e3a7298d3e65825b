-- window_claims(resource, units, window): what the reservations overlapping a window on these units
-- say of it, read in one pass: `conflict`, TAKEN when a live one is the resource's own (an unexpired
-- ACTIVE hold or a BOOKED booking, the caller's included), else TRANSFORMATION_CONFLICT when a live
-- one is of a resource sharing a unit with it (a convertible whole and its parts), else null; and
-- `overdue`, the holds past their expiry whose expiry has not been processed yet (they block
-- nobody: a writer expires them first, as their job would, db/rules/hold-expiry.ts, then writes),
-- else null. Read under the window's locks (lock_reservation_windows(), take_advisory_locks()), it
-- is what a hold, a hold group and a series are refused for.
--
-- Its statements run on generic plans kept per connection (plan_cache_mode): PL/pgSQL chose
-- custom plans for them and planned them again on every call, 0.05–0.2 ms each (pg_stat_statements).
--
-- requires: reservation_is_live, reservation_is_overdue
create or replace function window_claims(
  p_resource_id uuid, p_units uuid[], p_during tstzrange, out conflict text, out overdue uuid[]
)
language plpgsql stable
set plan_cache_mode = force_generic_plan
as $$
begin
  select case when bool_or(r.resource_id = p_resource_id and reservation_is_live(r)) then 'TAKEN'
              when bool_or(reservation_is_live(r)) then 'TRANSFORMATION_CONFLICT' end,
         array_agg(distinct r.hold_id) filter (where reservation_is_overdue(r))
    into conflict, overdue
    from reservations r
   where r.active and r.unit_id = any (p_units) and r.during && p_during;
end
$$;
