-- check_availability_access(partner, venue, one resource?, resource): what GET /slots/availability
-- refuses before it reads a grid, in order: a venue the partner may not see (authorized_venues()),
-- then, when one resource is asked for, one that is not the venue's (any text: the web process
-- passes null for one that is not a uuid). Raises SQLSTATE PB000 with the reason as the message
-- (db/postgres/pg-errors.ts); returns nothing otherwise.
--
-- requires: authorized_venues
create or replace function check_availability_access(
  p_partner_id uuid, p_venue_id uuid, p_one_resource boolean, p_resource_id uuid
) returns void
language plpgsql stable as $$
begin
  if not exists (select from authorized_venues(p_partner_id) v where v.id = p_venue_id) then
    raise exception using errcode = 'PB000', message = 'venue_not_authorized';
  end if;
  if p_one_resource and not exists (
    select from resources r where r.id = p_resource_id and r.venue_id = p_venue_id) then
    raise exception using errcode = 'PB000', message = 'resource_not_in_venue';
  end if;
end
$$;
