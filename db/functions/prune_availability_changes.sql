-- prune_availability_changes(retention seconds, batch): deletes up to `p_batch` changes recorded
-- longer ago than the retention, oldest first, remembering per venue the last position deleted
-- (availability_cursor_expired() reads it); positions every committed change first, so none is
-- deleted without one. The number deleted: the retention job calls it until it deletes fewer than
-- a batch.
--
-- requires: sequence_availability_changes
create or replace function prune_availability_changes(p_retention_seconds integer, p_batch integer)
returns integer
language plpgsql as $$
declare
  v_deleted integer;
begin
  perform sequence_availability_changes();
  with gone as (
    delete from availability_changes c
     where c.id in (select o.id from availability_changes o
                     where o.recorded_at < now() - make_interval(secs => p_retention_seconds)
                       and o.position is not null
                     order by o.recorded_at
                     limit p_batch)
    returning c.venue_id, c.position
  ), by_venue as (
    insert into availability_change_purges as p (venue_id, through_position)
    select g.venue_id, max(g.position) from gone g group by g.venue_id
    on conflict (venue_id) do update set through_position = greatest(p.through_position, excluded.through_position)
  )
  select count(*) into v_deleted from gone;
  return v_deleted;
end
$$;
