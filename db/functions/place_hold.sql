-- place_hold(trace, partner, key, fingerprint, venue, resource, start, minutes, phone): a hold, the
-- whole of POST /bookings/hold, in one statement and its own transaction, in this order:
--
-- - takes the idempotency key (lock_idempotency_key()); a key already used returns its record
--   instead (replayed), and the API answers from it (api/idempotency.ts);
-- - reads the venue (the partner's, not archived), the resource, and the grid slots the hold covers
--   with their prices and rules (venue_slots()), and the customer's membership discount
--   (membership_discount());
-- - orders itself behind writers of overlapping windows (lock_reservation_windows()), then reads the
--   overlapping reservations in a fresh snapshot (window_claims()): a live one refuses the hold
--   (slot_taken, or transformation_conflict when it is another resource's sharing a unit), an
--   overdue one (a hold past its expiry, not yet expired) is refused as `overdue` with the holds'
--   ids, which the caller expires as their job would and then places the hold again;
-- - inserts the hold and its reservations (the exclusion constraint has the last word), records
--   the availability change and hold_created, sends the hold's expiry job (send_job_hold_expire(), pg-boss's own send), and
--   stores the hold under the key (store_idempotency_key()).
--
-- Refusals are SQLSTATE PB000 with the reason as the message (db/postgres/pg-errors.ts), and leave
-- nothing behind. `p_trace` (the request's trace and id, as JSON) goes to the event's deliveries and
-- the expiry job.
--
-- requires: lock_idempotency_key, store_idempotency_key, authorized_venues, venue_slots,
--   membership_discount, resource_units, lock_reservation_windows, window_claims, slot_id,
--   record_availability_change, record_hold_event, job_trace
create or replace function place_hold(
  p_trace text, p_partner_id uuid, p_key text, p_fingerprint text, p_venue_id uuid, p_resource_id uuid,
  p_start timestamptz, p_minutes integer, p_customer_phone text,
  out replayed boolean, out operation text, out fingerprint text, out result jsonb, out response json
)
language plpgsql as $$
declare
  v_end timestamptz := p_start + make_interval(mins => p_minutes);
  v_venue venues;
  v_resource resources;
  v_units uuid[];
  v_count integer;
  v_first timestamptz;
  v_bookable boolean;
  v_full_price integer;
  v_discount integer;
  v_conflict text;
  v_overdue uuid[];
  v_hold holds;
  v_used idempotency_keys;
begin
  if p_trace is not null then
    perform set_config('booking.trace', p_trace, true);
  end if;
  v_used := lock_idempotency_key(p_partner_id, p_key);
  if v_used.key is not null then -- (a row IS NOT NULL only when every column is)
    select true, v_used.operation, v_used.fingerprint, v_used.result, v_used.response
      into replayed, operation, fingerprint, result, response;
    return;
  end if;

  select v.* into v_venue from authorized_venues(p_partner_id) v where v.id = p_venue_id;
  if not found then
    raise exception using errcode = 'PB000', message = 'venue_not_authorized';
  end if;
  select r.* into v_resource from resources r where r.id = p_resource_id and r.venue_id = v_venue.id;
  if not found then
    raise exception using errcode = 'PB000', message = 'resource_not_in_venue';
  end if;
  if v_venue.status <> 'active' then
    raise exception using errcode = 'PB000', message = 'venue_paused';
  end if;
  if p_minutes % v_resource.duration_minutes <> 0 then
    raise exception using errcode = 'PB000', message = 'duration_not_multiple',
      detail = v_resource.duration_minutes::text;
  end if;
  select count(*), min(s.slot_start), coalesce(bool_and(s.bookable), false), sum(s.price_rupees)
    into v_count, v_first, v_bookable, v_full_price
    from venue_slots(v_venue.id, (p_start at time zone v_venue.timezone)::date, v_resource.id, p_start, v_end) s;
  if v_first is distinct from p_start or v_count * v_resource.duration_minutes <> p_minutes then
    raise exception using errcode = 'PB000', message = 'not_on_grid';
  end if;
  if not v_bookable then
    raise exception using errcode = 'PB000', message = 'not_bookable';
  end if;
  v_discount := membership_discount(v_venue.id, p_customer_phone);

  v_units := resource_units(v_resource.id);
  perform lock_reservation_windows(v_units, tstzrange(p_start, v_end));
  select c.conflict, c.overdue into v_conflict, v_overdue
    from window_claims(v_resource.id, v_units, tstzrange(p_start, v_end)) c;
  if v_conflict is not null then
    raise exception using errcode = 'PB000',
      message = case v_conflict when 'TAKEN' then 'slot_taken' else 'transformation_conflict' end;
  end if;
  if v_overdue is not null then
    -- A hold past its expiry blocks nobody; the caller expires it (as its job would) and retries.
    raise exception using errcode = 'PB000', message = 'overdue', detail = array_to_string(v_overdue, ',');
  end if;

  insert into holds (partner_id, venue_id, resource_id, slot_id, slot_start, slot_end, hold_expiry_at,
                     price_rupees, customer_phone, discount_percent)
    values (p_partner_id, v_venue.id, v_resource.id, slot_id(v_resource.id, p_start), p_start, v_end,
            now() + make_interval(secs => v_venue.hold_seconds),
            round((v_full_price * (100 - v_discount))::numeric / 100)::integer, p_customer_phone, v_discount)
    returning * into v_hold;
  insert into reservations (hold_id, unit_id, resource_id, during, expires_at)
    select v_hold.id, u, v_hold.resource_id, tstzrange(v_hold.slot_start, v_hold.slot_end), v_hold.hold_expiry_at
      from unnest(v_units) u;
  perform record_availability_change(v_venue.id, array[v_hold.resource_id], array[tstzrange(p_start, v_end)]);
  perform record_hold_event(v_hold, 'hold_created', null); -- (the trace is the transaction's already)
  perform from send_job_hold_expire(jsonb_build_object('hold_id', v_hold.id) || job_trace(), v_hold.hold_expiry_at);

  replayed := false;
  result := to_jsonb(v_hold);
  perform store_idempotency_key(p_partner_id, p_key, 'hold', p_fingerprint, result);
end
$$;
