-- record_waitlist_event(entry, window start, end, price, trace): records and publishes the
-- waitlist_promoted event of an entry promoted to a freed window (the contract's additive type:
-- no hold or booking, the promoted slot, the entry's partner). Its id.
--
-- requires: record_event, iso_utc
create or replace function record_waitlist_event(
  w waitlist_entries, p_window_start timestamptz, p_window_end timestamptz, p_price integer,
  p_trace text default null
) returns uuid
language sql as $$
  select record_event('waitlist_promoted', w.venue_id, w.partner_id, null, null, w.slot_id,
    jsonb_build_object('waitlist_entry_id', w.id, 'resource_id', w.resource_id, 'slot_date', w.slot_date,
      'slot_start', iso_utc(p_window_start), 'slot_end', iso_utc(p_window_end), 'price_rupees', p_price,
      'status', w.status, 'promoted_at', iso_utc(w.promoted_at), 'expires_at', iso_utc(w.expires_at)),
    p_trace)
$$;
