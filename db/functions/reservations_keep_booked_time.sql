-- reservations_keep_booked_time(): the row trigger on reservations that keeps `booked_time`: a
-- reservation booked (active, no expiry) adds its window, one that stops being booked (cancelled,
-- refunded, deleted, moved) takes it away.
--
-- requires: booked_time_change
create or replace function reservations_keep_booked_time() returns trigger
language plpgsql as $$
begin
  if tg_op in ('UPDATE', 'DELETE') and old.active and old.expires_at is null then
    perform booked_time_change(old.unit_id, old.during, false);
  end if;
  if tg_op in ('INSERT', 'UPDATE') and new.active and new.expires_at is null then
    perform booked_time_change(new.unit_id, new.during, true);
  end if;
  return null;
end
$$;
