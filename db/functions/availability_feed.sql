-- availability_feed(venues, after position, after k, resource, limit): the feed's events after a
-- cursor, oldest first, at most `p_limit`: the events of the venues' changes positioned after
-- `p_after_position` (or, with `p_after_k`, those of that change after its event `p_after_k`,
-- then the changes after it), each with its change's position and its place `k` in it (its cursor),
-- its venue and its JSON (availability_change_events()). With `p_resource_id`, only the events of
-- that resource and the venue-wide ones; changes that cannot concern it are not expanded.
--
-- Changes are expanded a batch at a time, one set-based statement per batch, not one per change: 50
-- changes first, then twice as many each time (at most as many as events are still wanted, and
-- 1,000), so a change that lists many slots costs little beyond the page it fills.
--
-- Its statements run on generic plans, made once per connection: the expansion (the inlined
-- availability_change_events() and venue_slots()) takes ~10 ms to plan, more than it takes to run
-- for a tick's changes, and PL/pgSQL plans a statement afresh for each of its first five calls on a
-- connection. The streams' reader, whose reads move between the pool's connections, paid that
-- planning on most of its reads (a read of 30 changes: 19 ms with fresh plans, 8.7 ms generic).
--
-- requires: availability_change_events, resource_units
create or replace function availability_feed(
  p_venue_ids uuid[], p_after_position bigint, p_after_k integer, p_resource_id uuid, p_limit integer
) returns table (change_position bigint, k integer, venue_id uuid, event jsonb)
language plpgsql stable
set plan_cache_mode = force_generic_plan
as $$
#variable_conflict use_column
declare
  v_units uuid[] := case when p_resource_id is not null then resource_units(p_resource_id) end;
  v_from bigint := p_after_position + case when p_after_k is null then 1 else 0 end;
  v_changes availability_changes[];
  v_batch integer;
  v_size integer := 50;
  v_event record;
  v_listed integer := 0;
begin
  if p_limit <= 0 then
    return;
  end if;
  loop
    v_batch := least(p_limit - v_listed, v_size);
    v_size := least(v_size * 2, 1000);
    -- One venue (a poll, a stream catching up) reads its changes in order from its index; several
    -- (the streams' reader, just after its last read) read the few positioned since.
    if cardinality(p_venue_ids) = 1 then
      select array_agg(b order by b.position) into v_changes
        from (select c.* from availability_changes c
               where c.venue_id = p_venue_ids[1] and c.position is not null and c.position >= v_from
                 and (p_resource_id is null or c.kind = 'range'
                      or exists (select from unnest(c.resource_ids) r where resource_units(r) && v_units))
               order by c.venue_id, c.position
               limit v_batch) b;
    else
      select array_agg(b order by b.position) into v_changes
        from (select c.* from availability_changes c
               where c.venue_id = any (p_venue_ids) and c.position is not null and c.position >= v_from
                 and (p_resource_id is null or c.kind = 'range'
                      or exists (select from unnest(c.resource_ids) r where resource_units(r) && v_units))
               order by c.position
               limit v_batch) b;
    end if;
    exit when v_changes is null;
    for v_event in
      select e.change_position, e.k, e.resource_id, e.event, c.venue_id
        from availability_change_events(v_changes) e
        join unnest(v_changes) c on c.position = e.change_position
       order by e.change_position, e.k
    loop
      continue when v_event.change_position = p_after_position and p_after_k is not null
                    and v_event.k <= p_after_k;
      continue when p_resource_id is not null and v_event.resource_id is not null
                    and v_event.resource_id <> p_resource_id;
      change_position := v_event.change_position;
      k := v_event.k;
      venue_id := v_event.venue_id;
      event := v_event.event;
      return next;
      v_listed := v_listed + 1;
      if v_listed >= p_limit then
        return;
      end if;
    end loop;
    exit when cardinality(v_changes) < v_batch;
    v_from := v_changes[cardinality(v_changes)].position + 1;
  end loop;
end
$$;
