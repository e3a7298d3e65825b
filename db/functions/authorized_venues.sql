-- authorized_venues(partner): the venues a partner may see and book, the one definition of access:
-- granted to it, and not archived (an archived venue is invisible to every partner). Everything that
-- asks whether a partner may act at a venue asks this (venue_authorized()).
create or replace function authorized_venues(p_partner_id uuid) returns setof venues
language sql stable as $$
  select v.* from venues v join venue_grants g on g.venue_id = v.id
  where g.partner_id = p_partner_id and v.status <> 'archived'
$$;
