-- sequence_availability_changes(): gives every committed change without a position the next
-- positions (within one batch in no particular order: none of them was visible before), and answers
-- the log's last position (0 for an empty log). Positions are
-- handed out one batch at a time (a transaction-scoped advisory lock orders concurrent callers),
-- and a batch sees only changes committed before it began: a transaction that commits late is
-- positioned after every position already handed out, never behind one, and no reader ever waits
-- for a transaction still running. Every reader of the feed calls it first (a poll, each web
-- process's stream reader), so a change is listed as soon as a reader looks after its commit.
create or replace function sequence_availability_changes() returns bigint
language plpgsql as $$
begin
  perform pg_advisory_xact_lock(hashtextextended('availability-change-sequencer', 0));
  update availability_changes set position = nextval('availability_change_position') where position is null;
  return coalesce((select c.position from availability_changes c where c.position is not null
                    order by c.position desc limit 1), 0);
end
$$;
