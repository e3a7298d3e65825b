-- venue_availability(partner, venue, date, one resource?, resource): GET /slots/availability in one
-- statement: the partner's access to the venue and the resource asked for
-- (check_availability_access()), then the day's grid from venue_slots(), one row per resource with its
-- slots as comma-separated lists (starts and ends in epoch milliseconds, prices, and whether each
-- can be held). The web process makes ids and JSON from the lists (api/presenters/availability.ts).
--
-- Refusals: SQLSTATE PB000 with the reason as the message (db/postgres/pg-errors.ts).
--
-- requires: check_availability_access, venue_slots
create or replace function venue_availability(
  p_partner_id uuid, p_venue_id uuid, p_date date, p_one_resource boolean, p_resource_id uuid
) returns table (resource_id uuid, starts_ms text, ends_ms text, prices text, available text)
language plpgsql stable as $$
#variable_conflict use_column
begin
  perform check_availability_access(p_partner_id, p_venue_id, p_one_resource, p_resource_id);
  return query
  -- date_part, not extract: a float8 holds these instants exactly (whole milliseconds, years near
  -- now), and extract's numeric result was slower to make.
  select s.resource_id,
         string_agg((date_part('epoch', s.slot_start) * 1000)::bigint::text, ','),
         string_agg((date_part('epoch', s.slot_end) * 1000)::bigint::text, ','),
         string_agg(s.price_rupees::text, ','),
         string_agg(case when s.bookable and not s.taken then 't' else 'f' end, ',')
  from venue_slots(p_venue_id, p_date, p_resource_id) s
  group by s.resource_id
  order by s.resource_id;
end
$$;
