-- The forms of functions that the previous release's web and worker processes call, kept while a
-- rolling deploy runs both releases side by side: each only hands over to the current function.
-- The next release drops them in a migration, once no process of this one's predecessor is left.
--
-- - place_hold() without a trace and place_hold_traced(): place_hold(p_trace, …) is both now.
-- - confirm_hold() without a trace and confirm_hold_traced(): confirm_hold(p_trace, …).
-- - publish_event(event, trace): waitlist promotions published from TypeScript; events are recorded
--   and published by record_event() now.
-- - record_hold_event(hold, type) and record_booking_event(booking, type), without a trace: what the
--   previous release's place_hold() and confirm_hold() call until this release's replace them.
-- - claim_idempotency_key(partner, key, operation, fingerprint): the previous release's keyed writes
--   in TypeScript claim their key with it (inserting it at once, to update it with the result at the
--   end); this release locks the key (lock_idempotency_key()) and inserts it once, with its result.
--   The two meet on the unique key: see lock_idempotency_key.sql.
-- - availability_snapshot(): this release reads availability through availability_snapshot_since(),
--   which can answer that a grid the web process keeps still stands; this is it without one.
--
-- requires: place_hold, confirm_hold, publish_event, record_hold_event, record_booking_event,
--   availability_snapshot_since
create or replace function place_hold(
  p_partner_id uuid, p_key text, p_fingerprint text, p_venue_id uuid, p_resource_id uuid,
  p_start timestamptz, p_minutes integer, p_customer_phone text,
  out replayed boolean, out operation text, out fingerprint text, out result jsonb, out response json
)
language sql as $$
  select * from place_hold(null, p_partner_id, p_key, p_fingerprint, p_venue_id, p_resource_id, p_start,
                           p_minutes, p_customer_phone)
$$;

create or replace function place_hold_traced(
  p_trace text, p_partner_id uuid, p_key text, p_fingerprint text, p_venue_id uuid, p_resource_id uuid,
  p_start timestamptz, p_minutes integer, p_customer_phone text,
  out replayed boolean, out operation text, out fingerprint text, out result jsonb, out response json
)
language sql as $$
  select * from place_hold(p_trace, p_partner_id, p_key, p_fingerprint, p_venue_id, p_resource_id, p_start,
                           p_minutes, p_customer_phone)
$$;

create or replace function confirm_hold(
  p_partner_id uuid, p_key text, p_fingerprint text, p_hold_id uuid, p_payment_reference text,
  p_customer_name text, p_customer_phone text, p_customer_email text, p_use_package_credit boolean,
  out replayed boolean, out operation text, out fingerprint text, out result jsonb, out response json
)
language sql as $$
  select * from confirm_hold(null, p_partner_id, p_key, p_fingerprint, p_hold_id, p_payment_reference,
                             p_customer_name, p_customer_phone, p_customer_email, p_use_package_credit)
$$;

create or replace function confirm_hold_traced(
  p_trace text, p_partner_id uuid, p_key text, p_fingerprint text, p_hold_id uuid, p_payment_reference text,
  p_customer_name text, p_customer_phone text, p_customer_email text, p_use_package_credit boolean,
  out replayed boolean, out operation text, out fingerprint text, out result jsonb, out response json
)
language sql as $$
  select * from confirm_hold(p_trace, p_partner_id, p_key, p_fingerprint, p_hold_id, p_payment_reference,
                             p_customer_name, p_customer_phone, p_customer_email, p_use_package_credit)
$$;

create or replace function publish_event(p_event_id uuid, p_trace text) returns void
language plpgsql as $$
begin
  if p_trace is not null then
    perform set_config('booking.trace', p_trace, true);
  end if;
  perform publish_event(p_event_id);
end
$$;

create or replace function record_hold_event(h holds, p_type text) returns uuid
language sql as $$
  select record_hold_event(h, p_type, null)
$$;

create or replace function record_booking_event(b bookings, p_type text) returns uuid
language sql as $$
  select record_booking_event(b, p_type, null)
$$;

create or replace function availability_snapshot(
  p_partner_id uuid, p_venue_id uuid, p_date date, p_one_resource boolean, p_resource_id uuid
) returns table (
  resource_id uuid, starts_ms text, ends_ms text, prices text, available text, changes_position bigint
)
language sql stable as $$
  select s.resource_id, s.starts_ms, s.ends_ms, s.prices, s.available, s.changes_position
    from availability_snapshot_since(p_partner_id, p_venue_id, p_date, p_one_resource, p_resource_id,
                                     null, null, null) s
$$;

-- Inserts the key at once: null when this call claimed it, else the key's record.
create or replace function claim_idempotency_key(p_partner_id uuid, p_key text, p_operation text, p_fingerprint text)
returns idempotency_keys
language plpgsql as $$
declare
  v_record idempotency_keys;
begin
  insert into idempotency_keys (partner_id, key, operation, fingerprint)
    values (p_partner_id, p_key, p_operation, p_fingerprint) on conflict do nothing;
  if found then
    return null;
  end if;
  select k.* into v_record from idempotency_keys k where k.partner_id = p_partner_id and k.key = p_key;
  return v_record;
end
$$;
