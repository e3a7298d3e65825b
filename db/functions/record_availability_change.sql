-- record_availability_change(venue, resources, windows) and record_availability_range(venue,
-- resource, from, to, reason): the one change a transaction records when it changes what
-- GET /slots/availability shows, in that transaction, so a change exists if and only if what it
-- describes committed. A `slot` change names the windows it changed, each on its resource (a hold
-- group's several): the feed turns it into one event per grid slot they affect, each with the
-- slot's state when it is read (availability_change_events()). A `range` change is an operator's
-- (a blackout, a price rule, a venue's status, a new resource): "fetch availability again for these
-- venue-local dates", from `p_from` to `p_to` inclusive, each when not given the venue-local today
-- and today + max_advance_days. The change has no position yet: sequence_availability_changes()
-- gives it one once it is committed. Changes of reservations record theirs where the reservations
-- change (place_hold(), hold_group_items(), confirm_hold(), book_reservations(),
-- release_reservations()); the operator commands record ranges (db/cli/).
create or replace function record_availability_change(p_venue_id uuid, p_resource_ids uuid[], p_windows tstzrange[])
returns void
language plpgsql as $$
begin
  insert into availability_changes (venue_id, kind, resource_ids, windows)
    values (p_venue_id, 'slot', p_resource_ids, p_windows);
end
$$;

create or replace function record_availability_range(
  p_venue_id uuid, p_resource_id uuid, p_from date, p_to date, p_reason text
) returns void
language plpgsql as $$
begin
  insert into availability_changes (venue_id, kind, range_resource_id, from_date, to_date, reason)
    select v.id, 'range', p_resource_id, coalesce(p_from, (now() at time zone v.timezone)::date),
           coalesce(p_to, (now() at time zone v.timezone)::date + v.max_advance_days), p_reason
      from venues v where v.id = p_venue_id;
end
$$;

-- record_windows_changed(holds): the availability change of the windows of these holds (or of their
-- bookings), at one venue: the change a confirm or a release records.
--
-- On a generic plan (as the functions that run on every hold and confirm are), so that a confirm
-- does not plan this statement afresh (0.06 ms a confirm, `pg_stat_statements` with
-- `track_planning`). The holds are looked up one id at a time (a lateral subquery with `limit 1`):
-- a generic plan of `id = any(array)` cannot know the array holds one id, and is a sequential scan
-- of holds while the table is small, kept on that connection as it grows (the shared harness
-- measured PostgreSQL's CPU per cycle 2.33 → 2.55 ms with that plan). Looked up by id, the plan is
-- an index scan of holds' primary key for every size of the table (`EXPLAIN` on an empty database
-- and after a load run alike).
create or replace function record_windows_changed(p_hold_ids uuid[]) returns void
language plpgsql
set plan_cache_mode = force_generic_plan
as $$
begin
  perform record_availability_change(h.venue_id, array_agg(h.resource_id order by h.id),
                                     array_agg(tstzrange(h.slot_start, h.slot_end) order by h.id))
     from (select distinct id from unnest(p_hold_ids) id) u
    cross join lateral (select * from holds h where h.id = u.id limit 1) h
    group by h.venue_id;
end
$$;
