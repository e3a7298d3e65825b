-- availability_cursor_expired(venue, position, retention seconds): whether a cursor at `position` has
-- expired for the venue: a change of the venue positioned after it (or not positioned yet, which
-- will be) was recorded longer ago than the retention, whether or not retention has deleted it yet
-- (availability_change_purges remembers the last position it deleted per venue). A quiet venue's
-- cursor never expires. The web process passes its own retention setting, and for an event's cursor
-- the position of its change.
create or replace function availability_cursor_expired(p_venue_id uuid, p_position bigint, p_retention_seconds integer)
returns boolean
language plpgsql stable as $$
begin
  return exists (select from availability_change_purges p
                  where p.venue_id = p_venue_id and p.through_position > p_position)
      or exists (select from availability_changes c
                  where c.venue_id = p_venue_id
                    and c.recorded_at < now() - make_interval(secs => p_retention_seconds)
                    and (c.position is null or c.position > p_position));
end
$$;
