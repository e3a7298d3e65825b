-- availability_last_position(): the change log's last position, 0 for an empty log: what a snapshot's
-- `changes_cursor` names and what sequence_availability_changes() answers.
create or replace function availability_last_position() returns bigint
language sql stable as $$
  select coalesce((select c.position from availability_changes c where c.position is not null
                    order by c.position desc limit 1), 0)
$$;
