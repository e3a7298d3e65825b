-- record_event(type, venue, partner, hold, booking, slot, details, trace) and record_events(type,
-- drafts, trace): the one way events are recorded, from SQL and TypeScript alike
-- (db/rules/events.ts): the rows, and their deliveries (to event_recipients()), in the caller's
-- transaction, so an event exists if and only if its change committed, and every event has
-- its deliveries. `p_trace` (the request's or job's, as JSON) is set for the rest of the transaction
-- first: the deliveries and the jobs sent after carry it. Partners see an event as
-- db/rules/event-payload.ts shapes it.
--
-- record_event() records one event and makes its deliveries in one statement whose plan is kept for
-- the session; its id.
-- record_events() records a set (a hold group's: one per hold) in one insert and one publication,
-- one row per draft of `p_drafts` (a JSON array of `{venue_id, partner_id, hold_id, booking_id,
-- slot_id, details}`), in their order (the events' seq follows it); their ids, in order.
-- record_hold_event(s)(), record_booking_event(s)() and record_waitlist_event() say what each kind
-- of event holds.
--
-- requires: event_recipients, publish_event
create or replace function record_event(
  p_type text, p_venue_id uuid, p_partner_id uuid, p_hold_id uuid, p_booking_id uuid, p_slot_id uuid,
  p_details jsonb, p_trace text default null
) returns uuid
language plpgsql as $$
declare
  v_id uuid;
  v_published boolean;
begin
  if p_trace is not null then
    perform set_config('booking.trace', p_trace, true);
  end if;
  -- publish_events()'s insert, written here for the event just recorded: calling it cost ~16 µs an
  -- event more (pgbench, one client), twice in every hold → confirm cycle.
  with recorded as (
    insert into events (event_type, venue_id, partner_id, hold_id, booking_id, slot_id, details)
      values (p_type, p_venue_id, p_partner_id, p_hold_id, p_booking_id, p_slot_id, p_details)
      returning id
  ), published as (
    insert into webhook_deliveries (event_id, subscription_id, partner_id, next_attempt_id, next_attempt_at, trace)
    select e.id, s.subscription_id, s.partner_id, gen_random_uuid(), now(), nullif(current_setting('booking.trace', true), '')
      from recorded e
     cross join event_recipients(p_venue_id, p_type) s
    returning 1
  )
  select e.id, exists (select from published) into v_id, v_published from recorded e;
  if v_published then
    perform pg_notify('webhook_attempts_due', '');
  end if;
  return v_id;
end
$$;

create or replace function record_events(p_type text, p_drafts jsonb, p_trace text) returns uuid[]
language plpgsql as $$
declare
  v_ids uuid[];
begin
  if p_trace is not null then
    perform set_config('booking.trace', p_trace, true);
  end if;
  -- Rows are numbered in the order of the select, so seq follows the drafts' order.
  with recorded as (
    insert into events (event_type, venue_id, partner_id, hold_id, booking_id, slot_id, details)
    select p_type, (d ->> 'venue_id')::uuid, (d ->> 'partner_id')::uuid, (d ->> 'hold_id')::uuid,
           (d ->> 'booking_id')::uuid, (d ->> 'slot_id')::uuid, d -> 'details'
      from jsonb_array_elements(p_drafts) with ordinality as x(d, n)
     order by x.n
    returning id, seq
  )
  select array_agg(r.id order by r.seq) into v_ids from recorded r;
  perform publish_events(v_ids);
  return coalesce(v_ids, '{}');
end
$$;
