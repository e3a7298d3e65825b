-- iso_utc(t): an instant as the API writes every date-time, UTC ISO 8601 with milliseconds
-- ("2026-11-22T00:30:00.000Z"), for what the database writes into JSON itself (event details).
-- Stable, not immutable, as what it calls is: a SQL function declared immutable whose body is not
-- is never inlined, and was planned apart on every call.
create or replace function iso_utc(t timestamptz) returns text
language sql stable as $$
  select to_char(t at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
$$;
