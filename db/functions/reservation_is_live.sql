-- reservation_is_live(r): whether a reservation blocks its window now: active, and either booked
-- (no expiry) or held with its hold's expiry still ahead. A hold past hold_expiry_at blocks nobody,
-- whether or not its expiry has been processed yet.
create or replace function reservation_is_live(r reservations) returns boolean
language sql stable as $$
  select r.active and (r.expires_at is null or r.expires_at > now())
$$;
