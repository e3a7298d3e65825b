-- availability_day_span(venue, date): the instants a venue-local date's grid can reach, widened by
-- three hours on either side: every slot of the date lies inside, whatever its resources' hours,
-- and whatever AT TIME ZONE makes of a local time that a clock change skips or repeats (an error of
-- at most the change, never more than two hours in any zone). Null for a venue that does not exist.
-- PL/pgSQL so that its statement's plan is kept (a SQL function's is made on every call).
create or replace function availability_day_span(p_venue_id uuid, p_date date) returns tstzrange
language plpgsql stable as $$
declare
  v_timezone text;
begin
  select v.timezone into v_timezone from venues v where v.id = p_venue_id;
  if not found then
    return null;
  end if;
  return tstzrange((p_date::timestamp at time zone v_timezone) - interval '3 hours',
                   ((p_date + 1)::timestamp at time zone v_timezone) + interval '3 hours');
end
$$;
