-- publish_events(events) and publish_event(event): make the deliveries of events already recorded,
-- in the transaction that records them: one per event and recipient (event_recipients()), each
-- with its first attempt named and due now, and the transaction's trace for its attempts. One
-- NOTIFY per transaction (PostgreSQL merges them) wakes the workers' dispatchers when it commits.
-- Publishing an event twice makes nothing twice. record_events() calls publish_events(); the
-- previous release's publish_event(event, trace) calls publish_event(), one event as a set of one.
-- record_event(), on every hold and confirm, makes its event's deliveries in the statement that
-- records it (a call of a function here cost ~16 µs an event more).
--
-- requires: event_recipients
create or replace function publish_event(p_event_id uuid) returns void
language plpgsql as $$
begin
  perform publish_events(array[p_event_id]);
end
$$;

create or replace function publish_events(p_event_ids uuid[]) returns void
language plpgsql as $$
begin
  insert into webhook_deliveries (event_id, subscription_id, partner_id, next_attempt_id, next_attempt_at, trace)
  select e.id, s.subscription_id, s.partner_id, gen_random_uuid(), now(), nullif(current_setting('booking.trace', true), '')
    from events e
   cross join lateral event_recipients(e.venue_id, e.event_type) s
   where e.id = any (p_event_ids)
  on conflict (event_id, subscription_id) do nothing;
  if found then
    perform pg_notify('webhook_attempts_due', '');
  end if;
end
$$;
