-- reservation_is_overdue(r): an active reservation of a hold past its expiry, whose expiry has not
-- been processed yet: it blocks nobody, and a new hold in its way expires it first.
--
-- requires: reservation_is_live
create or replace function reservation_is_overdue(r reservations) returns boolean
language sql stable as $$
  select r.active and not reservation_is_live(r)
$$;
