-- availability_day_span(time zone, date): the instants a date of a venue in that time zone can show
-- slots in, widened by three hours on either side: every slot of the date lies inside, whatever its
-- resources' hours, and whatever AT TIME ZONE makes of a local time that a clock change skips or
-- repeats (an error of at most the change, never more than two hours in any zone). An expression
-- only, so that it is inlined where it is used.
create or replace function availability_day_span(p_timezone text, p_date date) returns tstzrange
language sql stable as $$
  select tstzrange((p_date::timestamp at time zone p_timezone) - interval '3 hours',
                   ((p_date + 1)::timestamp at time zone p_timezone) + interval '3 hours')
$$;
