-- hold_is_expired(h): expired, or ACTIVE with hold_expiry_at reached: a hold reads as expired from
-- that moment, whether or not the hold.expire job has run.
create or replace function hold_is_expired(h holds) returns boolean
language sql stable as $$
  select h.status = 'EXPIRED' or (h.status = 'ACTIVE' and h.hold_expiry_at <= now())
$$;
