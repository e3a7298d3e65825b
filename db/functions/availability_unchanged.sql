-- availability_unchanged(venue, date, position, snapshot): whether a grid of the venue-local date
-- read in `snapshot`, in which the change log ended at `position` (availability_snapshot_since()),
-- shows what it would show if read now, as far as the change log can tell: no change of the venue
-- that concerns the date was recorded by a transaction that snapshot did not see, and retention has
-- deleted none of the venue's changes positioned after it. A change concerns the date when it is a
-- `range` that covers it, or a `slot` change with a window in the date's span
-- (availability_day_span()). What time alone changes is the caller's to check
-- (availability_valid_until()).
--
-- Every change of what availability shows records a change in its own transaction (see
-- record_availability_change()), so this is exact wherever the feed is. A change the snapshot did
-- not see is positioned after `position`, or not positioned yet: positions are handed out to
-- committed changes only, one batch at a time, each batch's above every earlier one's. Both are
-- found by index: the venue's changes by position, and those not positioned yet by the transaction
-- that recorded them, from the snapshot's xmin (every older one was seen). However many changes no
-- reader has positioned yet, a question costs what the changes since it was last asked cost.
-- PL/pgSQL, not SQL: its statements' plans are kept per connection, where a SQL function that is
-- not inlined plans its statements on every call (~0.4 ms here, more than the rest of the answer).
--
-- requires: availability_day_span
create or replace function availability_unchanged(
  p_venue_id uuid, p_date date, p_position bigint, p_snapshot pg_snapshot
) returns boolean
language plpgsql stable as $$
begin
  return not exists (select from availability_change_purges p
                      where p.venue_id = p_venue_id and p.through_position > p_position)
     and not exists (
       select from venues v,
              -- The changes the snapshot may not have seen, each set by its own index.
              (select c.* from availability_changes c
                where c.venue_id = p_venue_id and c.position > p_position
               union all
               select c.* from availability_changes c
                where c.position is null and c.recorded_xid >= pg_snapshot_xmin(p_snapshot)
                  and c.venue_id = p_venue_id) c
        where v.id = p_venue_id
          and not pg_visible_in_snapshot(c.recorded_xid, p_snapshot)
          and ((c.kind = 'range' and p_date between c.from_date and c.to_date)
               or (c.kind = 'slot' and availability_day_span(v.timezone, p_date) && any (c.windows))));
end
$$;
