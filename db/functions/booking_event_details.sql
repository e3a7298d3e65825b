-- booking_event_details(b): the `details` of a booking's event (booking_created, booking_cancelled,
-- booking_refunded). The booking of a grouped hold adds its `hold_group_id`, and a series' also
-- `series_id` and `series_occurrence_index`; a field that does not apply is absent.
--
-- Stable, not immutable, as what it calls is: a SQL function declared immutable whose body is not
-- is never inlined, and was planned apart on every call.
--
-- requires: iso_utc
create or replace function booking_event_details(b bookings) returns jsonb
language sql stable as $$
  select jsonb_build_object(
    'resource_id', b.resource_id, 'slot_start', iso_utc(b.slot_start), 'slot_end', iso_utc(b.slot_end),
    'price_rupees', b.price_rupees, 'status', b.status, 'hold_id', b.hold_id)
    || case when b.hold_group_id is null then '{}'::jsonb
            else jsonb_build_object('hold_group_id', b.hold_group_id) end
    || case when b.series_id is null then '{}'::jsonb
            else jsonb_build_object('series_id', b.series_id,
                                    'series_occurrence_index', b.series_occurrence_index) end
$$;
