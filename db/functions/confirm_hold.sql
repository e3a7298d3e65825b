-- confirm_hold(trace, partner, key, fingerprint, hold, payment reference, customer name, phone,
-- email, use package credit): a confirm, the whole of POST /bookings/confirm, in one statement and
-- its own transaction. It claims the idempotency key (same key and request: the original booking;
-- another request: the API answers 409), locks the hold if it is the caller's and checks, in the
-- spec's order, that it exists, is the caller's, is at a venue still the caller's, is not one of a
-- hold group's (`hold_in_group`: a group is confirmed as one), has not expired, is ACTIVE, still
-- has its reservations, and that a member-priced hold is confirmed for its member; then, when
-- asked, takes one package credit (the caller's purchase for this customer and venue that expires
-- first, locked), books its reservations (book_reservations(), which records the availability
-- change), and writes the booking and booking_created. A replay answers the stored result, so it
-- never takes a second credit. Refusals: SQLSTATE PB000 with the reason as the message.
--
-- requires: lock_idempotency_key, store_idempotency_key, venue_authorized, hold_is_expired,
--   hold_is_intact, book_reservations, record_booking_event
create or replace function confirm_hold(
  p_trace text, p_partner_id uuid, p_key text, p_fingerprint text, p_hold_id uuid, p_payment_reference text,
  p_customer_name text, p_customer_phone text, p_customer_email text, p_use_package_credit boolean,
  out replayed boolean, out operation text, out fingerprint text, out result jsonb, out response json
)
language plpgsql as $$
declare
  v_hold holds;
  v_purchase uuid;
  v_booking bookings;
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

  -- The spec's order: it exists, it is the caller's, its venue is still the caller's. Only the
  -- caller's own hold is locked: another partner's id must not make its owner's writes wait.
  select h.* into v_hold from holds h where h.id = p_hold_id and h.partner_id = p_partner_id for update;
  if not found then
    if exists (select from holds h where h.id = p_hold_id) then
      raise exception using errcode = 'PB000', message = 'not_owner';
    end if;
    raise exception using errcode = 'PB000', message = 'hold_not_found';
  end if;
  if not venue_authorized(p_partner_id, v_hold.venue_id) then
    raise exception using errcode = 'PB000', message = 'venue_not_authorized';
  end if;
  -- A grouped hold is confirmed only with its group, whatever its state.
  if v_hold.hold_group_id is not null then
    raise exception using errcode = 'PB000', message = 'hold_in_group', detail = v_hold.hold_group_id::text;
  end if;
  if hold_is_expired(v_hold) then
    raise exception using errcode = 'PB000', message = 'hold_expired';
  end if;
  if v_hold.status <> 'ACTIVE' then
    raise exception using errcode = 'PB000', message = 'invalid_hold_state', detail = v_hold.status;
  end if;
  if not hold_is_intact(v_hold) then
    raise exception using errcode = 'PB000', message = 'double_booking';
  end if;
  -- A member's price is for that member (CONTRACT.md, "Hardening answers").
  if v_hold.discount_percent > 0 and p_customer_phone is distinct from v_hold.customer_phone then
    raise exception using errcode = 'PB000', message = 'not_the_member';
  end if;
  if p_use_package_credit then
    -- The caller's purchase for this customer and venue that expires first, locked: a concurrent
    -- confirm that emptied it first makes the lock's recheck skip it to the next, so the last
    -- credit is taken once and none goes below zero. None left: a paid confirm (CONTRACT.md).
    update package_purchases p set credits_remaining = p.credits_remaining - 1
      from (select pp.id from package_purchases pp
             where pp.partner_id = p_partner_id and pp.venue_id = v_hold.venue_id
               and pp.customer_phone = p_customer_phone and pp.credits_remaining > 0 and pp.expires_at > now()
             order by pp.expires_at, pp.id
             limit 1
             for update) c
     where p.id = c.id
     returning p.id into v_purchase;
  end if;

  update holds set status = 'CONFIRMED', updated_at = now() where id = v_hold.id;
  perform book_reservations(array[v_hold.id]);
  insert into bookings (hold_id, partner_id, venue_id, resource_id, slot_id, slot_start, slot_end, price_rupees,
                        payment_reference, payment_method, package_purchase_id, customer_name, customer_phone,
                        customer_email)
    values (v_hold.id, v_hold.partner_id, v_hold.venue_id, v_hold.resource_id, v_hold.slot_id, v_hold.slot_start,
            v_hold.slot_end, v_hold.price_rupees, p_payment_reference,
            case when v_purchase is not null then 'package' end, v_purchase, p_customer_name, p_customer_phone,
            p_customer_email)
    returning * into v_booking;
  perform record_booking_event(v_booking, 'booking_created', null); -- (the trace is set above)

  replayed := false;
  result := jsonb_build_object('booking', to_jsonb(v_booking), 'package_credit_consumed',
    case when p_use_package_credit is not null then v_purchase is not null end);
  perform store_idempotency_key(p_partner_id, p_key, 'confirm', p_fingerprint, result);
end
$$;
