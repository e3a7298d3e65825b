-- confirm_hold_group(trace, partner, key, fingerprint, group, payment reference, customer name,
-- phone, email, use package credit): every hold of a group becomes an ordinary booking, all in one
-- transaction, the whole of POST /bookings/hold-groups/{id}/confirm. The contract's order: the
-- group exists (`hold_group_not_found`), is the caller's (`not_owner`), at a venue still the
-- caller's (`venue_not_authorized`); the idempotency key; then its state: CONFIRMED or CANCELLED is
-- `invalid_hold_state`, past its hold_expiry_at (whether or not its expiry has been processed)
-- `hold_expired`; a hold that lost a reservation is `double_booking`; a member-priced hold
-- confirmed for another customer is `not_the_member`.
--
-- Package credits, one per hold, all or none: with `p_use_package_credit` and N holds, when the
-- caller's active purchases for that customer and venue hold N credits together (locked, so a
-- concurrent confirm cannot take them twice), N are taken, for the holds in item order, from the
-- purchase that expires first, then the next; each booking names the purchase its credit came
-- from. Otherwise every booking is paid. The result, stored under the key, is the group as it now
-- is (hold_group_json()) with `package_credits_consumed`: N or 0 when the request asked, else null.
--
-- requires: lock_idempotency_key, store_idempotency_key, venue_authorized, hold_is_intact,
--   book_reservations, record_booking_events, hold_group_json
create or replace function confirm_hold_group(
  p_trace text, p_partner_id uuid, p_key text, p_fingerprint text, p_group_id uuid, p_payment_reference text,
  p_customer_name text, p_customer_phone text, p_customer_email text, p_use_package_credit boolean,
  out replayed boolean, out operation text, out fingerprint text, out result jsonb, out response json
)
language plpgsql as $$
declare
  v_group hold_groups;
  v_used idempotency_keys;
  v_count integer;
  v_take boolean := false;
  v_hold holds;
  v_purchase uuid;
  v_booking_id uuid;
  v_booking_ids uuid[] := '{}';
  v_hold_ids uuid[];
begin
  if p_trace is not null then
    perform set_config('booking.trace', p_trace, true);
  end if;
  -- Only the caller's own group is locked: another partner's id must not make its owner wait.
  select g.* into v_group from hold_groups g where g.id = p_group_id and g.partner_id = p_partner_id for update;
  if not found then
    if exists (select from hold_groups g where g.id = p_group_id) then
      raise exception using errcode = 'PB000', message = 'not_owner';
    end if;
    raise exception using errcode = 'PB000', message = 'hold_group_not_found';
  end if;
  if not venue_authorized(p_partner_id, v_group.venue_id) then
    raise exception using errcode = 'PB000', message = 'venue_not_authorized';
  end if;
  v_used := lock_idempotency_key(p_partner_id, p_key);
  if v_used.key is not null then -- (a row IS NOT NULL only when every column is)
    select true, v_used.operation, v_used.fingerprint, v_used.result, v_used.response
      into replayed, operation, fingerprint, result, response;
    return;
  end if;
  if v_group.status in ('CONFIRMED', 'CANCELLED') then
    raise exception using errcode = 'PB000', message = 'invalid_hold_state', detail = v_group.status;
  end if;
  if v_group.status = 'EXPIRED' or v_group.hold_expiry_at <= now() then
    raise exception using errcode = 'PB000', message = 'hold_expired';
  end if;
  -- The group's holds, locked, in item order. Read by id from here on: a group's holds are few,
  -- and the plans stay index lookups however the table's statistics guess.
  v_hold_ids := array(select h.id from holds h where h.hold_group_id = v_group.id order by h.item_index for update);
  if exists (select from holds h where h.id = any (v_hold_ids) and not hold_is_intact(h)) then
    raise exception using errcode = 'PB000', message = 'double_booking';
  end if;
  -- A member's price is for that member (CONTRACT.md, "Hardening answers").
  if exists (select from holds h where h.id = any (v_hold_ids)
                and h.discount_percent > 0 and p_customer_phone is distinct from h.customer_phone) then
    raise exception using errcode = 'PB000', message = 'not_the_member';
  end if;

  v_count := cardinality(v_hold_ids);
  if p_use_package_credit then
    -- Locked first, so the count stands until the credits are taken.
    perform from package_purchases pp
      where pp.partner_id = p_partner_id and pp.venue_id = v_group.venue_id
        and pp.customer_phone = p_customer_phone and pp.credits_remaining > 0 and pp.expires_at > now()
      order by pp.expires_at, pp.id
      for update;
    v_take := (select coalesce(sum(pp.credits_remaining), 0) from package_purchases pp
                where pp.partner_id = p_partner_id and pp.venue_id = v_group.venue_id
                  and pp.customer_phone = p_customer_phone and pp.expires_at > now()) >= v_count;
  end if;

  perform book_reservations(v_hold_ids);
  update holds set status = 'CONFIRMED', updated_at = now() where id = any (v_hold_ids);
  for v_hold in select h.* from holds h where h.id = any (v_hold_ids) order by h.item_index loop
    v_purchase := null;
    if v_take then
      update package_purchases p set credits_remaining = p.credits_remaining - 1
        from (select pp.id from package_purchases pp
               where pp.partner_id = p_partner_id and pp.venue_id = v_group.venue_id
                 and pp.customer_phone = p_customer_phone and pp.credits_remaining > 0 and pp.expires_at > now()
               order by pp.expires_at, pp.id
               limit 1) c
       where p.id = c.id
       returning p.id into v_purchase;
    end if;
    insert into bookings (hold_id, partner_id, venue_id, resource_id, slot_id, slot_start, slot_end, price_rupees,
                          payment_reference, payment_method, package_purchase_id, customer_name, customer_phone,
                          customer_email, hold_group_id, series_id, series_occurrence_index)
      values (v_hold.id, v_hold.partner_id, v_hold.venue_id, v_hold.resource_id, v_hold.slot_id, v_hold.slot_start,
              v_hold.slot_end, v_hold.price_rupees, p_payment_reference,
              case when v_purchase is not null then 'package' end, v_purchase, p_customer_name, p_customer_phone,
              p_customer_email, v_group.id, v_hold.series_id, v_hold.series_occurrence_index)
      returning id into v_booking_id;
    v_booking_ids := v_booking_ids || v_booking_id;
  end loop;
  perform record_booking_events('booking_created', v_booking_ids, null);
  update hold_groups set status = 'CONFIRMED', confirmed_at = now(), updated_at = now() where id = v_group.id;

  replayed := false;
  result := hold_group_json(v_group.id) || jsonb_build_object('package_credits_consumed',
    case when p_use_package_credit is not null then case when v_take then v_count else 0 end end);
  perform store_idempotency_key(p_partner_id, p_key, 'hold_group_confirm', p_fingerprint, result);
end
$$;
