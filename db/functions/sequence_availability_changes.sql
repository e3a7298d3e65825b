-- sequence_availability_changes(): gives every committed change without a position the next
-- positions (within one batch in no particular order: none of them was visible before), keeps the
-- last of them as the log's position (availability_last_position() reads it), and answers it (0 for
-- a log that never had a change). Positions are handed out one batch at a time (a
-- transaction-scoped advisory lock orders concurrent callers), and a batch sees only changes
-- committed before it began: a transaction that commits late is positioned after every position
-- already handed out, never behind one, and no reader ever waits for a transaction still running.
-- Every reader of the feed calls it first (a poll, each web process's stream reader), so a change is
-- listed as soon as a reader looks after its commit.
--
-- A batch looks only at changes recorded by transactions at or after the watermark: every older
-- transaction had ended when the previous batch looked, so its changes are positioned already. The
-- index of changes without a position keeps an entry for each row positioned since the last
-- vacuum; the watermark keeps a batch from reading them again (it costs the same after a million
-- changes as after ten, vacuumed or not).
create or replace function sequence_availability_changes() returns bigint
language plpgsql as $$
declare
  v_from xid8;
  v_next xid8;
  v_last bigint;
  v_reached bigint;
begin
  perform pg_advisory_xact_lock(hashtextextended('availability-change-sequencer', 0));
  select s.watermark, s.last_position into v_from, v_last from availability_change_sequencer s;
  -- Every transaction below v_next has ended before the update below takes its snapshot: what it
  -- recorded is committed and seen there (or aborted and gone).
  v_next := pg_snapshot_xmin(pg_current_snapshot());
  with positioned as (
    update availability_changes set position = nextval('availability_change_position')
     where position is null and recorded_xid >= v_from
    returning position
  )
  select max(p.position) into v_reached from positioned p;
  if v_next > v_from or v_reached is not null then
    v_last := greatest(v_last, v_reached);
    update availability_change_sequencer set watermark = greatest(watermark, v_next), last_position = v_last;
  end if;
  return v_last;
end
$$;
