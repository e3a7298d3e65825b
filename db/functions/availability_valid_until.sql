-- availability_valid_until(venue, date): until when a grid of the venue-local date read now stays
-- what it would be if read again, as far as time alone goes (what the change log records is
-- availability_unchanged()'s): the first instant at which
--
-- - a hold in the date's span (availability_day_span()) stops blocking its window: its expiry, or
--   its reservations', whichever comes first, whether or not the worker has processed it yet;
-- - the date enters or leaves the booking window (venue_slots(): the venue-local today to today +
--   max_advance_days). Local midnights are taken three hours early, and for three hours after one
--   the answer is now(): a grid read then is not kept. That covers what AT TIME ZONE makes of a
--   midnight that a clock change skips or repeats.
--
-- The third thing time changes, the lead time (a slot can be held only while it starts more than
-- min_lead_minutes from now), depends on each slot's start: the caller takes it from the grid it
-- read (api/use-cases/kept-availability.ts). Infinity when nothing here will change; null for a
-- venue that does not exist. PL/pgSQL so that its statements' plans are kept per connection (as a
-- SQL function it planned them on every call, 0.3 ms: more than reading one resource's grid).
--
-- requires: availability_day_span
create or replace function availability_valid_until(p_venue_id uuid, p_date date) returns timestamptz
language plpgsql stable as $$
declare
  v_enters timestamptz;
  v_leaves timestamptz;
  v_span tstzrange;
  v_edge timestamptz;
begin
  select ((p_date - v.max_advance_days)::timestamp at time zone v.timezone),
         ((p_date + 1)::timestamp at time zone v.timezone),
         availability_day_span(v.timezone, p_date)
    into v_enters, v_leaves, v_span
    from venues v where v.id = p_venue_id;
  if not found then
    return null;
  end if;
  v_edge := case when now() < v_enters - interval '3 hours' then v_enters - interval '3 hours'
                 when now() < v_enters + interval '3 hours' then now()
                 when now() < v_leaves - interval '3 hours' then v_leaves - interval '3 hours'
                 when now() < v_leaves + interval '3 hours' then now()
                 else 'infinity'::timestamptz end;
  return least(v_edge,
               (select min(least(h.hold_expiry_at, rv.expires_at))
                  from holds h join reservations rv on rv.hold_id = h.id
                 where h.venue_id = p_venue_id and h.status = 'ACTIVE' and h.hold_expiry_at > now()
                   and rv.active and rv.expires_at > now()
                   and tstzrange(h.slot_start, h.slot_end) && v_span));
end
$$;
