-- membership_discount(venue, phone): the percent a customer's membership takes off at the venue now:
-- the best of their memberships there that have not expired, 0 without one (or without a phone).
--
-- Its statements run on generic plans kept per connection (plan_cache_mode): PL/pgSQL chose
-- custom plans for them and planned them again on every call, 0.05–0.2 ms each (pg_stat_statements).
create or replace function membership_discount(p_venue_id uuid, p_customer_phone text) returns integer
language plpgsql stable
set plan_cache_mode = force_generic_plan
as $$
begin
  return (
    select coalesce(max(m.discount_percent), 0) from memberships m
     where m.venue_id = p_venue_id and m.customer_phone = p_customer_phone
       and (m.expires_at is null or m.expires_at > now())
  );
end
$$;
