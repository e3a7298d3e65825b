-- utc_offset(instant, zone): the zone's offset from UTC at that instant, as `+HH:MM` or `-HH:MM`
-- (`+00:00` when it is zero): what a series occurrence shows beside its UTC instants, so that a
-- partner sees the wall clock move across a daylight-saving change.
create or replace function utc_offset(p_at timestamptz, p_zone text) returns text
language sql immutable as $$
  select case when m < 0 then '-' else '+' end || lpad((abs(m) / 60)::text, 2, '0') || ':'
         || lpad((abs(m) % 60)::text, 2, '0')
    from (select (extract(epoch from (p_at at time zone p_zone) - (p_at at time zone 'UTC')) / 60)::integer as m) o
$$;
