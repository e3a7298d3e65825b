-- place_hold_group(trace, partner, key, fingerprint, venue, items, phone): several windows at one
-- venue held all or nothing, the whole of POST /bookings/hold-groups, in one statement and its own
-- transaction, in the contract's order:
--
-- 1. items that overlap an earlier item (on the same resource, or on one sharing a unit with it:
--    a convertible whole and its part) refuse the request as malformed: `items_overlap`, detail
--    the indexes;
-- 2. the venue is the partner's (`venue_not_authorized`);
-- 3. the idempotency key (a key already used returns its record: replayed);
-- 4. every item is judged, each for the first reason that applies: UNKNOWN_RESOURCE, then the
--    venue's rules (window_rule_refusal()), then, once the windows of every item are locked in one
--    ascending order (take_advisory_locks(): two groups sharing windows in opposite item order
--    queue, never deadlock), TAKEN or TRANSFORMATION_CONFLICT (window_claims()). Any refusal
--    refuses the whole request: `items_refused`, detail a JSON array of {item, reason}, nothing
--    held, no event, no key. Holds past their expiry in the way are `overdue` (detail their ids):
--    the caller expires them, as their job would, and calls again.
--
-- Then every item becomes an ordinary hold of the group (hold_group_items(): item order, one expiry
-- for all, the venue's hold_seconds from now), priced by window_price() with the customer's
-- membership discount. The result, stored under the key, is the group and its holds.
-- Items are JSON `{resource_id, slot_start, slot_duration_minutes}`, checked for shape by the API.
--
-- requires: resource_units, authorized_venues, lock_idempotency_key,
--   store_idempotency_key, window_rule_refusal, reservation_window_locks, take_advisory_locks,
--   window_claims, window_price, membership_discount, hold_group_items, hold_group_json
create or replace function place_hold_group(
  p_trace text, p_partner_id uuid, p_key text, p_fingerprint text, p_venue_id uuid, p_items jsonb,
  p_customer_phone text,
  out replayed boolean, out operation text, out fingerprint text, out result jsonb, out response json
)
language plpgsql as $$
declare
  v_count integer := jsonb_array_length(p_items);
  v_overlapping text;
  v_venue venues;
  v_resource resources;
  v_used idempotency_keys;
  v_discount integer;
  v_resources uuid[] := '{}';
  v_named text;
  v_starts timestamptz[] := '{}';
  v_minutes integer[] := '{}';
  v_reasons text[] := '{}';
  v_keys bigint[] := '{}';
  v_overdue uuid[] := '{}';
  v_conflict text;
  v_in_the_way uuid[];
  v_prices integer[];
  v_group hold_groups;
  i integer;
begin
  if p_trace is not null then
    perform set_config('booking.trace', p_trace, true);
  end if;

  -- 1. Items that overlap an earlier one (windows that only touch do not), before the venue is
  -- judged, as the contract orders: a whole and its part overlap at any venue, granted or not.
  -- That tells a caller no more than a TRANSFORMATION_CONFLICT tells any partner granted the venue,
  -- and only of resource ids it was shown while it was granted.
  with item as (
    select (e.n - 1)::integer as i, coalesce(r.id::text, e.item ->> 'resource_id') as resource,
           case when r.id is not null then resource_units(r.id) end as units,
           tstzrange((e.item ->> 'slot_start')::timestamptz,
                     (e.item ->> 'slot_start')::timestamptz
                       + make_interval(mins => (e.item ->> 'slot_duration_minutes')::integer)) as during
      from jsonb_array_elements(p_items) with ordinality as e(item, n)
      left join resources r
        on r.venue_id = p_venue_id
       and r.id = case when e.item ->> 'resource_id' ~* '^[0-9a-f]{8}-([0-9a-f]{4}-){3}[0-9a-f]{12}$'
                       then (e.item ->> 'resource_id')::uuid end
  )
  select string_agg(j.i::text, ',' order by j.i) into v_overlapping
    from item j
   where exists (select from item k
                  where k.i < j.i and k.during && j.during
                    and (k.resource = j.resource or k.units && j.units));
  if v_overlapping is not null then
    raise exception using errcode = 'PB000', message = 'items_overlap', detail = v_overlapping;
  end if;

  -- 2. The venue.
  select v.* into v_venue from authorized_venues(p_partner_id) v where v.id = p_venue_id;
  if not found then
    raise exception using errcode = 'PB000', message = 'venue_not_authorized';
  end if;

  -- 3. The key.
  v_used := lock_idempotency_key(p_partner_id, p_key);
  if v_used.key is not null then -- (a row IS NOT NULL only when every column is)
    select true, v_used.operation, v_used.fingerprint, v_used.result, v_used.response
      into replayed, operation, fingerprint, result, response;
    return;
  end if;

  -- 4. Each item: its resource and the venue's rules.
  for i in 0 .. v_count - 1 loop
    v_starts := v_starts || (p_items -> i ->> 'slot_start')::timestamptz;
    v_minutes := v_minutes || (p_items -> i ->> 'slot_duration_minutes')::integer;
    v_named := p_items -> i ->> 'resource_id';
    select r.* into v_resource from resources r
     where r.venue_id = v_venue.id
       and r.id = case when v_named ~* '^[0-9a-f]{8}-([0-9a-f]{4}-){3}[0-9a-f]{12}$' then v_named::uuid end;
    if not found then
      v_resources := v_resources || null::uuid;
      v_reasons := v_reasons || 'UNKNOWN_RESOURCE'::text;
      continue;
    end if;
    v_resources := v_resources || v_resource.id;
    v_reasons := v_reasons || window_rule_refusal(v_venue, v_resource, v_starts[i + 1], v_minutes[i + 1],
                                                  v_venue.max_advance_days);
    if v_reasons[i + 1] is null then
      v_keys := v_keys || array(select k from reservation_window_locks(resource_units(v_resource.id),
                                  tstzrange(v_starts[i + 1], v_starts[i + 1] + make_interval(mins => v_minutes[i + 1]))) k);
    end if;
  end loop;

  -- ... then, under the locks of every window, what is taken.
  perform take_advisory_locks(v_keys);
  for i in 1 .. v_count loop
    continue when v_reasons[i] is not null;
    select c.conflict, c.overdue into v_conflict, v_in_the_way
      from window_claims(v_resources[i], resource_units(v_resources[i]),
                         tstzrange(v_starts[i], v_starts[i] + make_interval(mins => v_minutes[i]))) c;
    v_reasons[i] := v_conflict;
    v_overdue := v_overdue || coalesce(v_in_the_way, '{}');
  end loop;
  if exists (select from unnest(v_reasons) r where r is not null) then
    raise exception using errcode = 'PB000', message = 'items_refused',
      detail = (select jsonb_agg(jsonb_build_object('item', n - 1, 'reason', r) order by n)
                  from unnest(v_reasons) with ordinality as x(r, n) where r is not null)::text;
  end if;
  if cardinality(v_overdue) > 0 then
    raise exception using errcode = 'PB000', message = 'overdue', detail = array_to_string(v_overdue, ',');
  end if;

  -- Every item held, as one group (hold_group_items()).
  v_discount := membership_discount(v_venue.id, p_customer_phone);
  v_prices := array(select window_price(v_venue, r, x.start, x.minutes, v_discount)
                      from unnest(v_resources, v_starts, v_minutes) with ordinality as x(resource_id, start, minutes, n)
                      join resources r on r.id = x.resource_id
                     order by x.n);
  insert into hold_groups (partner_id, venue_id, hold_expiry_at, price_rupees, customer_phone)
    values (p_partner_id, v_venue.id, now() + make_interval(secs => v_venue.hold_seconds),
            (select sum(p) from unnest(v_prices) p), p_customer_phone)
    returning * into v_group;
  perform hold_group_items(v_group, v_resources, v_starts, v_minutes, v_prices, v_discount, null);

  replayed := false;
  result := hold_group_json(v_group.id);
  perform store_idempotency_key(p_partner_id, p_key, 'hold_group', p_fingerprint, result);
end
$$;
