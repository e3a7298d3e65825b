-- availability_last_position(): the change log's last position, 0 for an empty log: what a snapshot's
-- `changes_cursor` names and what sequence_availability_changes() answers. PL/pgSQL so that its plan
-- is kept per connection: a SQL function with a subquery is never inlined, and planned its
-- statement on every call (~0.1 ms, as much as the rest of a kept grid's question).
create or replace function availability_last_position() returns bigint
language plpgsql stable as $$
begin
  return coalesce((select c.position from availability_changes c where c.position is not null
                    order by c.position desc limit 1), 0);
end
$$;
