-- reservations_clear_booked_time(): the statement trigger that empties `booked_time` when
-- reservations is truncated (tests do), so the two never disagree.
create or replace function reservations_clear_booked_time() returns trigger
language plpgsql as $$
begin
  truncate booked_time;
  return null;
end
$$;
