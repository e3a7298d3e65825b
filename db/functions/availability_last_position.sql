-- availability_last_position(): the change log's last position, 0 for a log that never had a change:
-- what a snapshot's `changes_cursor` names and what sequence_availability_changes() answers. Kept by
-- the sequencer as it hands positions out, in the same transaction, so a reader sees the position of
-- the changes committed before its snapshot; retention deleting changes never moves it back.
-- PL/pgSQL so that its plan is kept per connection (a SQL function with a subquery is never inlined,
-- and planned its statement on every call).
create or replace function availability_last_position() returns bigint
language plpgsql stable as $$
begin
  return (select s.last_position from availability_change_sequencer s);
end
$$;
