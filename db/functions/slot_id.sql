-- slot_id(resource, start): the stable id of a grid slot. The same resource and start always give
-- the same uuid (a version-5-shaped md5 of both), so availability, holds and bookings agree on it
-- without storing slots. db/rules/slot-id.ts is its JavaScript twin, for the availability body.
-- Stable, not immutable, as what it calls is: a SQL function declared immutable whose body is not
-- is never inlined, and was planned apart on every call.
create or replace function slot_id(p_resource_id uuid, p_start timestamptz) returns uuid
language sql stable as $$
  select overlay(overlay(
    md5('booking-slot:' || p_resource_id || '/' || (extract(epoch from p_start) * 1000)::bigint)
    placing '5' from 13 for 1) placing '8' from 17 for 1)::uuid
$$;
