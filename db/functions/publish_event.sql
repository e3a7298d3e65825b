-- publish_event(event): makes the event's deliveries, in the transaction that records it: one per
-- active subscription that lists its type, of every partner who may see its venue now
-- (venue_authorized(): an event recorded while its venue is archived goes to nobody), each with its
-- first attempt named and due now, and the transaction's trace for its attempts. One NOTIFY per
-- transaction (PostgreSQL merges them) wakes the workers' dispatchers when it commits. Publishing
-- an event twice makes nothing twice. Called by record_event() only.
--
-- requires: venue_authorized
create or replace function publish_event(p_event_id uuid) returns void
language plpgsql as $$
begin
  insert into webhook_deliveries (event_id, subscription_id, partner_id, next_attempt_id, next_attempt_at, trace)
  select e.id, s.id, s.partner_id, gen_random_uuid(), now(), nullif(current_setting('booking.trace', true), '')
    from events e
    join venue_grants g on g.venue_id = e.venue_id
    join webhook_subscriptions s on s.partner_id = g.partner_id
   where e.id = p_event_id and s.is_active and e.event_type = any (s.event_types)
     and venue_authorized(g.partner_id, e.venue_id)
  on conflict (event_id, subscription_id) do nothing;
  if found then
    perform pg_notify('webhook_attempts_due', '');
  end if;
end
$$;
