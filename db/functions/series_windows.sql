-- series_windows(venue, resource, first date, start time, minutes, count, interval): the occurrences
-- of a weekly pattern, kept on the venue's clock. Occurrence k falls on the venue-local date
-- first_date + 7 × interval × k (dates, never 7 × 86,400 seconds), and its window starts at the
-- earliest start of that date's day grid of the resource (the grid of window_rule_refusal() and
-- venue_slots(): slots step in absolute time from the instant the resource opens that date) whose
-- venue-local wall-clock time is `start_time`, lasting `minutes`. Across a daylight-saving change
-- the wall-clock time is kept and the UTC instant moves; where `start_time` occurs twice on a date
-- (the clocks went back) the first is taken; where no grid start has it (the clocks skipped it, it
-- is outside the opening hours, or off the grid) the occurrence has no window (null start and end).
-- Each window comes with the zone's UTC offset at its start (utc_offset()).
--
-- requires: utc_offset
create or replace function series_windows(
  p_venue venues, p_resource resources, p_first_date date, p_start_time time, p_minutes integer,
  p_count integer, p_interval_weeks integer
) returns table (
  occurrence_index integer, local_date date, slot_start timestamptz, slot_end timestamptz, utc_offset text
)
language sql stable as $$
  select k, d.local_date, w.start, w.start + make_interval(mins => p_minutes),
         case when w.start is not null then utc_offset(w.start, p_venue.timezone) end
    from generate_series(0, p_count - 1) k
    cross join lateral (select p_first_date + 7 * p_interval_weeks * k as local_date) d
    left join lateral (
      select g as start
        from generate_series((d.local_date + p_resource.opens_at) at time zone p_venue.timezone,
                             (d.local_date + p_resource.closes_at) at time zone p_venue.timezone
                               - make_interval(mins => p_resource.duration_minutes),
                             make_interval(mins => p_resource.duration_minutes)) g
       where (g at time zone p_venue.timezone)::time = p_start_time
         and (g at time zone p_venue.timezone)::date = d.local_date
       order by g
       limit 1
    ) w on true
   order by k
$$;
