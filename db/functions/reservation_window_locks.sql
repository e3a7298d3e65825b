-- reservation_window_locks(units, window): the advisory lock keys of a window on some units, one per
-- unit and hour the window touches. Writers of overlapping windows on a unit share at least one key,
-- so taking the keys in order (take_advisory_locks()) makes them queue instead of deadlocking in
-- the exclusion check, while windows in other hours of the same unit go ahead.
-- Stable, not immutable, as what it calls is: a SQL function declared immutable whose body is not
-- is never inlined, and was planned apart on every call.
create or replace function reservation_window_locks(p_units uuid[], p_during tstzrange) returns setof bigint
language sql stable as $$
  select distinct hashtextextended('reservation-window:' || u || ':' || h, 0)
    from unnest(p_units) u,
         generate_series(floor(extract(epoch from lower(p_during)) / 3600)::bigint,
                         ceil(extract(epoch from upper(p_during)) / 3600)::bigint - 1) h
$$;
