-- hold_event_details(h): the `details` of a hold's event (hold_created, hold_cancelled,
-- hold_expired), what partners receive and the missed-event pull lists. A grouped hold's add its
-- `hold_group_id`, and a series' also `series_id` and `series_occurrence_index`; a field that does
-- not apply is absent.
--
-- Stable, not immutable, as what it calls is: a SQL function declared immutable whose body is not
-- is never inlined, and was planned apart on every call.
--
-- requires: iso_utc
create or replace function hold_event_details(h holds) returns jsonb
language sql stable as $$
  select jsonb_build_object(
    'resource_id', h.resource_id, 'slot_start', iso_utc(h.slot_start), 'slot_end', iso_utc(h.slot_end),
    'price_rupees', h.price_rupees, 'hold_expiry_at', iso_utc(h.hold_expiry_at), 'status', h.status)
    || case when h.hold_group_id is null then '{}'::jsonb
            else jsonb_build_object('hold_group_id', h.hold_group_id) end
    || case when h.series_id is null then '{}'::jsonb
            else jsonb_build_object('series_id', h.series_id,
                                    'series_occurrence_index', h.series_occurrence_index) end
$$;
