-- venue_authorized(partner, venue): whether the partner may see and book the venue now
-- (authorized_venues()).
--
-- PL/pgSQL so that its statement's plan is kept per connection (plan_cache_mode = generic): as a
-- SQL function with a subquery it is never inlined, and was planned on every call (0.1–0.2 ms).
--
-- requires: authorized_venues
create or replace function venue_authorized(p_partner_id uuid, p_venue_id uuid) returns boolean
language plpgsql stable
set plan_cache_mode = force_generic_plan
as $$
begin
  return exists (select 1 from authorized_venues(p_partner_id) v where v.id = p_venue_id);
end
$$;
