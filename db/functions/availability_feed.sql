-- availability_feed(venues, after position, after k, resource, limit): the feed's events after a
-- cursor, oldest first, at most `p_limit`: the events of the venues' changes positioned after
-- `p_after_position` (or, with `p_after_k`, those of that change after its event `p_after_k`,
-- then the changes after it), each with its change's position and its place `k` in it (its cursor),
-- its venue and its JSON (availability_change_events()). With `p_resource_id`, only the events of
-- that resource and the venue-wide ones; changes that cannot concern it are not expanded.
--
-- requires: availability_change_events, resource_units
create or replace function availability_feed(
  p_venue_ids uuid[], p_after_position bigint, p_after_k integer, p_resource_id uuid, p_limit integer
) returns table (change_position bigint, k integer, venue_id uuid, event jsonb)
language plpgsql stable as $$
#variable_conflict use_column
declare
  v_change availability_changes;
  v_event record;
  v_units uuid[] := case when p_resource_id is not null then resource_units(p_resource_id) end;
  v_listed integer := 0;
begin
  if p_limit <= 0 then
    return;
  end if;
  for v_change in
    select c.* from availability_changes c
     where c.venue_id = any (p_venue_ids) and c.position is not null
       and c.position >= p_after_position + case when p_after_k is null then 1 else 0 end
     order by c.position
  loop
    if p_resource_id is not null and v_change.kind = 'slot' and not exists (
         select from unnest(v_change.resource_ids) r where resource_units(r) && v_units) then
      continue;
    end if;
    for v_event in select * from availability_change_events(v_change) e loop
      continue when v_change.position = p_after_position and p_after_k is not null and v_event.k <= p_after_k;
      continue when p_resource_id is not null and v_event.resource_id is not null
                    and v_event.resource_id <> p_resource_id;
      change_position := v_change.position;
      k := v_event.k;
      venue_id := v_change.venue_id;
      event := v_event.event;
      return next;
      v_listed := v_listed + 1;
      if v_listed >= p_limit then
        return;
      end if;
    end loop;
  end loop;
end
$$;
