-- lock_reservation_windows(units, window): takes, in one fixed order, a transaction-scoped advisory
-- lock per unit and hour the window touches. Writers of overlapping windows on a unit then queue
-- instead of deadlocking inside the exclusion check (measured: a 64-client fight on one window gave
-- 40P01 after deadlock_timeout and lost half the winnable holds), while other windows of the same
-- unit go ahead. A caller holding several windows passes all their units and hours in one call, so
-- its locks too are taken in the one order, and two callers never wait on each other in a cycle.
create or replace function lock_reservation_windows(p_units uuid[], p_during tstzrange) returns void
language plpgsql as $$
declare
  v_key bigint;
begin
  for v_key in
    select distinct hashtextextended('reservation-window:' || u || ':' || h, 0)
      from unnest(p_units) u,
           generate_series(floor(extract(epoch from lower(p_during)) / 3600)::bigint,
                           ceil(extract(epoch from upper(p_during)) / 3600)::bigint - 1) h
     order by 1
  loop
    perform pg_advisory_xact_lock(v_key);
  end loop;
end
$$;
