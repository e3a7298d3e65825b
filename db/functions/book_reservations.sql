-- book_reservations(holds) and release_reservations(holds): the reservations of holds become booked
-- (confirmed: no expiry) or stop blocking (released, cancelled, refunded, expired), one by one in
-- unit, then time, order. A reservation that is or becomes booked changes the booked time of its
-- unit and UTC day (booked_time, a row per unit and day, kept by the triggers on reservations), and
-- writers that change those rows in one order never deadlock. (Item by item, two groups confirming
-- windows of the same courts on one day in opposite orders did, and waited deadlock_timeout for it.)
-- Either records the one availability change of the windows (record_availability_change()): a
-- confirm leaves them unavailable but no longer held; a release frees them.
--
-- Booking one hold (every single confirm) is one statement: its reservations are its units' in
-- one window, inserted in unit order, and the statement books them in that order (the loop costs a
-- statement per unit).
--
-- requires: record_availability_change
create or replace function book_reservations(p_hold_ids uuid[]) returns void
language plpgsql as $$
declare
  v_id bigint;
begin
  if cardinality(p_hold_ids) = 1 then
    update reservations set expires_at = null where hold_id = p_hold_ids[1] and active;
  else
    for v_id in
      select r.id from reservations r where r.hold_id = any (p_hold_ids) and r.active order by r.unit_id, lower(r.during)
    loop
      update reservations set expires_at = null where id = v_id;
    end loop;
  end if;
  perform record_windows_changed(p_hold_ids);
end
$$;

create or replace function release_reservations(p_hold_ids uuid[]) returns void
language plpgsql as $$
declare
  v_id bigint;
begin
  for v_id in
    select r.id from reservations r where r.hold_id = any (p_hold_ids) and r.active order by r.unit_id, lower(r.during)
  loop
    update reservations set active = false where id = v_id;
  end loop;
  perform record_windows_changed(p_hold_ids);
end
$$;
