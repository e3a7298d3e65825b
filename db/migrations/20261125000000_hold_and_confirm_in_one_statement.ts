/**
 * A hold and a confirm, each one database function called in one statement: one round trip instead
 * of eight to ten (BEGIN, the idempotency claim, the context, the lock and overlap read, the insert,
 * two or three pg-boss sends, the idempotency result, COMMIT). On this machine class a round trip
 * costs more CPU, on both ends, than most of these statements do (docs/BENCHMARKS.md, issue 11).
 * The statement is its own transaction: it commits when it returns and leaves nothing behind when
 * it raises.
 *
 * - `place_hold()` and `confirm_hold()` do what api/use-cases/create-hold.ts and confirm-booking.ts
 *   did statement by statement, checks in the same order. A refusal is raised as SQLSTATE PB000
 *   with a reason word as its message (`db/postgres/pg-errors.ts` reads it; the use case turns it
 *   into the API's error), so the claimed idempotency key goes back with everything else.
 * - The idempotency key is claimed first, as before: a concurrent retry waits on the unique index,
 *   then the next statement (a new snapshot: PL/pgSQL in READ COMMITTED takes one per statement)
 *   reads what the first attempt committed. The write's result is stored as data
 *   (`idempotency_keys.result`, the hold or booking row) and presented by the route, the first time
 *   and on every replay alike; `response` keeps what earlier versions stored, already presented.
 * - Writers of overlapping windows are ordered by `lock_reservation_windows()`: one advisory lock
 *   per unit and hour the window touches, taken in a fixed order, instead of a row lock on the
 *   resource, which also queued holds for unrelated windows of the same resource. Two overlapping
 *   windows on one unit share the hour of any instant they share, so they still queue, and never
 *   deadlock inside the exclusion check (DESIGN.md). The overlap read runs after the lock, in a
 *   fresh snapshot, so it sees every rival that committed before.
 * - An event is published in the transaction that records it (`publish_event()`): its deliveries
 *   are made there and then, each with its first attempt's job, instead of by a webhook.fanout job
 *   per event. That job cost more than the rest of the hold together (a send, then the worker's
 *   fetch, transaction and completion, for every event, subscribers or not), and delayed every
 *   delivery by a second queue hop. A subscription now hears of the events recorded once it exists
 *   (and its partner holds the grant), which is also what a partner reads it to mean.
 *   `record_hold_event()` / `record_booking_event()` record and publish; jobs are sent through the
 *   functions `npm run migrate` generates from pg-boss's own send() (db/jobs/sql-send.ts).
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    alter table idempotency_keys add column result jsonb;
    comment on column idempotency_keys.result is
      'The result of a write made in one database function (place_hold, confirm_hold), as data; presented on every answer.';

    -- Orders the writers of reservations that could overlap (see the migration's header).
    create function lock_reservation_windows(p_units uuid[], p_during tstzrange) returns void
    language plpgsql as $$
    declare
      v_key bigint;
    begin
      for v_key in
        select distinct hashtextextended('reservation-window:' || u || ':' || h, 0)
          from unnest(p_units) u,
               generate_series(floor(extract(epoch from lower(p_during)) / 3600)::bigint,
                               ceil(extract(epoch from upper(p_during)) / 3600)::bigint - 1) h
         order by 1
      loop
        perform pg_advisory_xact_lock(v_key);
      end loop;
    end
    $$;

    -- Publishes an event, in the transaction that records it: one delivery per active subscription
    -- that lists its type, of every partner granted the event's venue, each with its first attempt
    -- named and queued (its lease, webhook.deliver's expiry, is the connection's setting
    -- booking.webhook_attempt_lease_seconds when set: db/postgres/knex.ts). Publishing twice
    -- creates nothing twice.
    create function publish_event(p_event_id uuid) returns void language plpgsql as $$
    declare
      v_delivery record;
    begin
      for v_delivery in
        insert into webhook_deliveries (event_id, subscription_id, partner_id, next_attempt_id, next_attempt_at)
        select e.id, s.id, s.partner_id, gen_random_uuid(), now()
          from events e
          join venue_grants g on g.venue_id = e.venue_id
          join webhook_subscriptions s on s.partner_id = g.partner_id
         where e.id = p_event_id and s.is_active and e.event_type = any (s.event_types)
        on conflict (event_id, subscription_id) do nothing
        returning id, next_attempt_id
      loop
        perform from send_job_webhook_deliver(
          jsonb_build_object('delivery_id', v_delivery.id, 'attempt_id', v_delivery.next_attempt_id), null,
          nullif(current_setting('booking.webhook_attempt_lease_seconds', true), '')::integer);
      end loop;
    end
    $$;

    -- Records an event of a hold and publishes it, in the caller's transaction.
    create function record_hold_event(h holds, p_type text) returns uuid language plpgsql as $$
    declare
      v_id uuid;
    begin
      insert into events (event_type, venue_id, partner_id, hold_id, booking_id, slot_id, details)
        values (p_type, h.venue_id, h.partner_id, h.id, null, h.slot_id, hold_event_details(h))
        returning id into v_id;
      perform publish_event(v_id);
      return v_id;
    end
    $$;

    -- Records an event of a booking and publishes it, in the caller's transaction.
    create function record_booking_event(b bookings, p_type text) returns uuid language plpgsql as $$
    declare
      v_id uuid;
    begin
      insert into events (event_type, venue_id, partner_id, hold_id, booking_id, slot_id, details)
        values (p_type, b.venue_id, b.partner_id, b.hold_id, b.id, b.slot_id, booking_event_details(b))
        returning id into v_id;
      perform publish_event(v_id);
      return v_id;
    end
    $$;

    -- Claims an idempotency key for the calling transaction: null when this call claimed it, else
    -- the key's record. A claim in flight elsewhere is waited for (the unique index), and the record
    -- is read by a statement of its own, so it sees what that claim committed.
    create function claim_idempotency_key(p_partner_id uuid, p_key text, p_operation text, p_fingerprint text)
    returns idempotency_keys language plpgsql as $$
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

    -- A hold has expired: EXPIRED, or ACTIVE past its expiry on the database clock (its job not run).
    create function hold_is_expired(h holds) returns boolean language sql stable as $$
      select h.status = 'EXPIRED' or (h.status = 'ACTIVE' and h.hold_expiry_at <= now())
    $$;

    -- Every unit of a hold's resource still has the hold's live reservation.
    create function hold_is_intact(h holds) returns boolean language sql stable as $$
      select (select count(*) from reservations rv where rv.hold_id = h.id and reservation_is_live(rv))
             = cardinality(resource_units(h.resource_id))
    $$;

    -- POST /bookings/hold. Returns the new hold, or (replayed) what the key stored.
    create function place_hold(
      p_partner_id uuid, p_key text, p_fingerprint text, p_venue_id uuid, p_resource_id uuid,
      p_start timestamptz, p_minutes integer, p_customer_phone text,
      out replayed boolean, out operation text, out fingerprint text, out result jsonb, out response json)
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
      v_live uuid[];
      v_overdue uuid[];
      v_hold holds;
      v_used idempotency_keys;
    begin
      v_used := claim_idempotency_key(p_partner_id, p_key, 'hold', p_fingerprint);
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
      select coalesce(max(m.discount_percent), 0) into v_discount from memberships m
        where m.venue_id = v_venue.id and m.customer_phone = p_customer_phone
          and (m.expires_at is null or m.expires_at > now());

      v_units := resource_units(v_resource.id);
      perform lock_reservation_windows(v_units, tstzrange(p_start, v_end));
      select array_agg(distinct r.resource_id) filter (where reservation_is_live(r)),
             array_agg(distinct r.hold_id) filter (where reservation_is_overdue(r))
        into v_live, v_overdue
        from reservations r
        where r.active and r.unit_id = any (v_units) and r.during && tstzrange(p_start, v_end);
      if v_live is not null then
        raise exception using errcode = 'PB000',
          message = case when v_resource.id = any (v_live) then 'slot_taken' else 'transformation_conflict' end;
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
      perform record_hold_event(v_hold, 'hold_created');
      perform from send_job_hold_expire(jsonb_build_object('hold_id', v_hold.id), v_hold.hold_expiry_at);

      replayed := false;
      result := to_jsonb(v_hold);
      update idempotency_keys k set result = place_hold.result where k.partner_id = p_partner_id and k.key = p_key;
    end
    $$;

    -- POST /bookings/confirm. Returns {booking, package_credit_consumed}, or (replayed) what the key stored.
    create function confirm_hold(
      p_partner_id uuid, p_key text, p_fingerprint text, p_hold_id uuid, p_payment_reference text,
      p_customer_name text, p_customer_phone text, p_customer_email text, p_use_package_credit boolean,
      out replayed boolean, out operation text, out fingerprint text, out result jsonb, out response json)
    language plpgsql as $$
    declare
      v_hold holds;
      v_purchase uuid;
      v_booking bookings;
      v_used idempotency_keys;
    begin
      v_used := claim_idempotency_key(p_partner_id, p_key, 'confirm', p_fingerprint);
      if v_used.key is not null then -- (a row IS NOT NULL only when every column is)
        select true, v_used.operation, v_used.fingerprint, v_used.result, v_used.response
          into replayed, operation, fingerprint, result, response;
        return;
      end if;

      -- The spec's order: it exists, it is the caller's, its venue is still the caller's.
      select h.* into v_hold from holds h where h.id = p_hold_id for update;
      if not found then
        raise exception using errcode = 'PB000', message = 'hold_not_found';
      end if;
      if v_hold.partner_id <> p_partner_id then
        raise exception using errcode = 'PB000', message = 'not_owner';
      end if;
      if not venue_authorized(p_partner_id, v_hold.venue_id) then
        raise exception using errcode = 'PB000', message = 'venue_not_authorized';
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
      update reservations set expires_at = null where hold_id = v_hold.id;
      insert into bookings (hold_id, partner_id, venue_id, resource_id, slot_id, slot_start, slot_end, price_rupees,
                            payment_reference, payment_method, package_purchase_id, customer_name, customer_phone,
                            customer_email)
        values (v_hold.id, v_hold.partner_id, v_hold.venue_id, v_hold.resource_id, v_hold.slot_id, v_hold.slot_start,
                v_hold.slot_end, v_hold.price_rupees, p_payment_reference,
                case when v_purchase is not null then 'package' end, v_purchase, p_customer_name, p_customer_phone,
                p_customer_email)
        returning * into v_booking;
      perform record_booking_event(v_booking, 'booking_created');

      replayed := false;
      result := jsonb_build_object('booking', to_jsonb(v_booking), 'package_credit_consumed',
        case when p_use_package_credit is not null then v_purchase is not null end);
      update idempotency_keys k set result = confirm_hold.result where k.partner_id = p_partner_id and k.key = p_key;
    end
    $$;
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    drop function confirm_hold(uuid, text, text, uuid, text, text, text, text, boolean);
    drop function place_hold(uuid, text, text, uuid, uuid, timestamptz, integer, text);
    drop function record_booking_event(bookings, text);
    drop function record_hold_event(holds, text);
    drop function publish_event(uuid);
    drop function hold_is_intact(holds);
    drop function hold_is_expired(holds);
    drop function claim_idempotency_key(uuid, text, text, text);
    drop function lock_reservation_windows(uuid[], tstzrange);
    alter table idempotency_keys drop column result;
  `);
}
