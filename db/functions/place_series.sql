-- place_series(trace, partner, key, fingerprint, venue, resource, first date, start time, minutes,
-- count, interval, excluded dates, phone, on conflict, min occurrences): a weekly series held as one
-- hold group, the whole of POST /bookings/series, in one statement and its own transaction, in the
-- contract's order (the API has checked the body: dates, exclusions, min_occurrences):
--
-- 1. the venue is the partner's (`venue_not_authorized`), and the resource one of its resources
--    (`unknown_resource`, a validation error naming resource_id);
-- 2. the idempotency key (a key already used returns its record: replayed);
-- 3. every occurrence is judged under the locks of every holdable window (judge_series(), the
--    judgement the preview makes too). `reject`: any failing occurrence refuses the request;
--    `skip`: failing occurrences are skipped, and the request is refused only when fewer than
--    `p_min_occurrences` would be held. A refusal is `occurrences_refused`, detail a JSON array of
--    {occurrence, reason, local_date}, one per failing occurrence in index order: nothing held, no
--    event, no key. Holds past their expiry in the way are `overdue` (detail their ids): the caller
--    expires them, as their job would, and calls again.
--
-- Then the held occurrences become the holds of one hold group naming the series (hold_group_items():
-- index order, one expiry, one expiry job), priced by window_price() with the customer's membership
-- discount; the series keeps its pattern as created and every occurrence (HELD with its hold,
-- SKIPPED with its reason, EXCLUDED). The result, stored under the key, is the series as it now is
-- (series_json()).
--
-- requires: authorized_venues, lock_idempotency_key, store_idempotency_key, judge_series,
--   window_price, membership_discount, hold_group_items, series_json
create or replace function place_series(
  p_trace text, p_partner_id uuid, p_key text, p_fingerprint text, p_venue_id uuid, p_resource_id text,
  p_first_date date, p_start_time time, p_minutes integer, p_count integer, p_interval_weeks integer,
  p_excluded date[], p_customer_phone text, p_on_conflict text, p_min_occurrences integer,
  out replayed boolean, out operation text, out fingerprint text, out result jsonb, out response json
)
language plpgsql as $$
declare
  v_venue venues;
  v_resource resources;
  v_used idempotency_keys;
  v_judged record;
  v_indexes integer[] := '{}';
  v_starts timestamptz[] := '{}';
  v_failing jsonb := '[]';
  v_overdue uuid[] := '{}';
  v_occurrences jsonb := '[]';
  v_discount integer;
  v_prices integer[];
  v_series_id uuid := gen_random_uuid();
  v_group hold_groups;
begin
  if p_trace is not null then
    perform set_config('booking.trace', p_trace, true);
  end if;

  -- 1. The venue, then the resource.
  select v.* into v_venue from authorized_venues(p_partner_id) v where v.id = p_venue_id;
  if not found then
    raise exception using errcode = 'PB000', message = 'venue_not_authorized';
  end if;
  select r.* into v_resource from resources r
   where r.venue_id = v_venue.id
     and r.id = case when p_resource_id ~* '^[0-9a-f]{8}-([0-9a-f]{4}-){3}[0-9a-f]{12}$' then p_resource_id::uuid end;
  if not found then
    raise exception using errcode = 'PB000', message = 'unknown_resource';
  end if;

  -- 2. The key.
  v_used := lock_idempotency_key(p_partner_id, p_key);
  if v_used.key is not null then -- (a row IS NOT NULL only when every column is)
    select true, v_used.operation, v_used.fingerprint, v_used.result, v_used.response
      into replayed, operation, fingerprint, result, response;
    return;
  end if;

  -- 3. Every occurrence, under the locks of its window.
  for v_judged in
    select * from judge_series(v_venue, v_resource, p_first_date, p_start_time, p_minutes, p_count,
                               p_interval_weeks, p_excluded, true)
  loop
    v_occurrences := v_occurrences || jsonb_build_object(
      'occurrence_index', v_judged.occurrence_index, 'local_date', v_judged.local_date,
      'slot_start', v_judged.slot_start, 'slot_end', v_judged.slot_end, 'utc_offset', v_judged.utc_offset,
      'created_status', case when v_judged.excluded then 'EXCLUDED'
                             when v_judged.reason is not null then 'SKIPPED' else 'HELD' end,
      'reason', v_judged.reason);
    if v_judged.excluded then
      continue;
    elsif v_judged.reason is not null then
      v_failing := v_failing || jsonb_build_object('occurrence', v_judged.occurrence_index,
                                                   'reason', v_judged.reason, 'local_date', v_judged.local_date);
    else
      v_indexes := v_indexes || v_judged.occurrence_index;
      v_starts := v_starts || v_judged.slot_start;
      v_overdue := v_overdue || coalesce(v_judged.overdue, '{}');
    end if;
  end loop;
  if jsonb_array_length(v_failing) > 0
     and (p_on_conflict = 'reject' or cardinality(v_indexes) < p_min_occurrences) then
    raise exception using errcode = 'PB000', message = 'occurrences_refused', detail = v_failing::text;
  end if;
  if cardinality(v_overdue) > 0 then
    raise exception using errcode = 'PB000', message = 'overdue', detail = array_to_string(v_overdue, ',');
  end if;

  -- The held occurrences, as one group naming the series.
  v_discount := membership_discount(v_venue.id, p_customer_phone);
  v_prices := array(select window_price(v_venue, v_resource, s, p_minutes, v_discount)
                      from unnest(v_starts) with ordinality as x(s, n) order by x.n);
  insert into hold_groups (partner_id, venue_id, series_id, hold_expiry_at, price_rupees, customer_phone)
    values (p_partner_id, v_venue.id, v_series_id, now() + make_interval(secs => v_venue.hold_seconds),
            (select sum(p) from unnest(v_prices) p), p_customer_phone)
    returning * into v_group;
  insert into series (id, partner_id, venue_id, resource_id, hold_group_id, timezone, first_date, start_time,
                      slot_duration_minutes, count, interval_weeks, price_rupees)
    values (v_series_id, p_partner_id, v_venue.id, v_resource.id, v_group.id, v_venue.timezone, p_first_date,
            p_start_time, p_minutes, p_count, p_interval_weeks, v_group.price_rupees);
  perform hold_group_items(v_group, array_fill(v_resource.id, array[cardinality(v_starts)]), v_starts,
                           array_fill(p_minutes, array[cardinality(v_starts)]), v_prices, v_discount, v_indexes);
  insert into series_occurrences (series_id, occurrence_index, local_date, slot_start, slot_end, utc_offset,
                                  created_status, reason, price_rupees, hold_id)
  select v_series_id, (o ->> 'occurrence_index')::integer, (o ->> 'local_date')::date,
         (o ->> 'slot_start')::timestamptz, (o ->> 'slot_end')::timestamptz, o ->> 'utc_offset',
         o ->> 'created_status', o ->> 'reason', h.price_rupees, h.id
    from jsonb_array_elements(v_occurrences) o
    left join holds h on h.hold_group_id = v_group.id
                     and h.item_index = array_position(v_indexes, (o ->> 'occurrence_index')::integer) - 1;

  replayed := false;
  result := series_json(v_series_id);
  perform store_idempotency_key(p_partner_id, p_key, 'series', p_fingerprint, result);
end
$$;
