-- take_advisory_locks(keys): takes the transaction-scoped advisory lock of every key, each once, in
-- ascending order. Every writer of reservations takes all its keys this way, a single hold and a
-- hold group of eight windows alike, so no two writers ever wait on each other in a cycle: two
-- groups sharing windows in opposite item order queue, and neither is refused for a deadlock.
create or replace function take_advisory_locks(p_keys bigint[]) returns void
language plpgsql as $$
declare
  v_key bigint;
begin
  for v_key in select distinct k from unnest(p_keys) k order by 1 loop
    perform pg_advisory_xact_lock(v_key);
  end loop;
end
$$;
