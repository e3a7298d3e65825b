-- window_overdue_holds(units, window): the holds past their expiry, whose expiry has not been
-- processed yet, with a reservation overlapping the window on these units. They block nobody: a
-- writer expires them first, as their job would (db/rules/hold-expiry.ts), then writes.
--
-- requires: reservation_is_overdue
create or replace function window_overdue_holds(p_units uuid[], p_during tstzrange) returns uuid[]
language sql stable as $$
  select array_agg(distinct r.hold_id)
    from reservations r
   where r.active and r.unit_id = any (p_units) and r.during && p_during and reservation_is_overdue(r)
$$;
