-- take_rate_limit_tokens(key, limit, count): admits or refuses `count` requests of an API key that
-- arrived in this order, exactly as many calls of one request each would: a request is admitted
-- when fewer than `limit` admitted requests lie in the 60 seconds before it (a sliding window,
-- exact). One row per request, in the same order: whether it is admitted, the requests left, the
-- milliseconds until the window's oldest hit leaves it (`reset_ms`), and until a request would be
-- admitted (`retry_ms`, a refused one's Retry-After): the reset while the window holds no more hits
-- than the limit, later when it holds more (an operator lowered the limit). The requests share one
-- instant (they are admitted together, under the key's window lock), so none of the window expires
-- between them: the first ones are admitted while there is room, the rest refused, and refused
-- requests are not recorded. A web process sends the requests of a key that arrive while its
-- previous statement runs as one batch (db/queries/key-authenticator.ts): 16 concurrent requests of
-- one key used to queue on the window row one statement at a time.
--
-- The window is a ring of hits per key (`rate_limit_hits`, seq from head to next), trimmed from the
-- head as hits leave it; both tables are unlogged (a crash resets every window, never a booking).
-- Its statements run on generic plans kept per connection (plan_cache_mode): PL/pgSQL chose
-- custom plans for them and planned them again on every call, 0.05–0.2 ms each (pg_stat_statements).
create or replace function take_rate_limit_tokens(p_api_key_id uuid, p_limit integer, p_count integer)
returns table (allowed boolean, remaining integer, reset_ms bigint, retry_ms bigint)
language plpgsql
set plan_cache_mode = force_generic_plan
as $$
declare
  v_head bigint;
  v_next bigint;
  v_now timestamptz;
  v_admitted integer;
  v_oldest timestamptz;
  v_reset_ms bigint;
  v_room timestamptz;
  v_retry_ms bigint;
begin
  select w.head_seq, w.next_seq into v_head, v_next from rate_limit_windows w
    where w.api_key_id = p_api_key_id for update;
  if not found then
    insert into rate_limit_windows (api_key_id) values (p_api_key_id) on conflict do nothing;
    select w.head_seq, w.next_seq into v_head, v_next from rate_limit_windows w
      where w.api_key_id = p_api_key_id for update;
  end if;
  -- Read the clock only once the lock is held, so hit times follow the order of admission.
  v_now := clock_timestamp();
  while v_head < v_next loop
    delete from rate_limit_hits h
      where h.api_key_id = p_api_key_id and h.seq = v_head and h.hit_at <= v_now - interval '60 seconds';
    exit when not found;
    v_head := v_head + 1;
  end loop;
  v_admitted := least(p_count, greatest(p_limit - (v_next - v_head), 0));
  if v_admitted > 0 then
    insert into rate_limit_hits (api_key_id, seq, hit_at)
      select p_api_key_id, s, v_now from generate_series(v_next, v_next + v_admitted - 1) s;
  end if;
  update rate_limit_windows w set head_seq = v_head, next_seq = v_next + v_admitted
    where w.api_key_id = p_api_key_id;
  -- Until the oldest hit of the window leaves it; the same for the whole batch.
  select h.hit_at into v_oldest from rate_limit_hits h
    where h.api_key_id = p_api_key_id and h.seq = v_head;
  v_reset_ms := coalesce(ceil(extract(epoch from (v_oldest + interval '60 seconds' - v_now)) * 1000), 0);
  v_retry_ms := v_reset_ms;
  -- A request fits once the window holds fewer hits than the limit: when the hit `p_limit` places
  -- before the next one leaves. Read only when a request was refused.
  if v_admitted < p_count and p_limit > 0 then
    select h.hit_at into v_room from rate_limit_hits h
      where h.api_key_id = p_api_key_id and h.seq = v_next + v_admitted - p_limit;
    v_retry_ms := greatest(v_reset_ms,
                           coalesce(ceil(extract(epoch from (v_room + interval '60 seconds' - v_now)) * 1000), 0));
  end if;
  -- The i-th request counts itself and the admitted ones before it; a refused one sees the window
  -- full.
  return query
    select i <= v_admitted,
           greatest(p_limit - (v_next - v_head + least(i, v_admitted)), 0)::integer,
           v_reset_ms,
           v_retry_ms
      from generate_series(1, p_count) i
     order by i;
end
$$;
