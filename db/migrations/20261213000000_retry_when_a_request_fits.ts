/**
 * `take_rate_limit_tokens()` also says when a refused request would be admitted (`retry_ms`, the
 * 429's Retry-After): that is when the window's oldest hit leaves (the reset) only while the window
 * holds no more hits than the limit. After an operator lowers a partner's limit it can hold more,
 * and a partner told to come back at the reset was refused again. Its result gains a column, so
 * the function is dropped here and created anew from its file (db/functions/).
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw('drop function take_rate_limit_tokens(uuid, integer, integer)');
}

export async function down(knex: Knex): Promise<void> {
  // The function as the migrations before this one made it (20261201000000, word for word; the
  // file in force replaces it on the next `npm run migrate`). Without the files (migrations alone)
  // the up left none.
  await knex.raw(`
    drop function if exists take_rate_limit_tokens(uuid, integer, integer);
    create function take_rate_limit_tokens(p_api_key_id uuid, p_limit integer, p_count integer)
    returns table (allowed boolean, remaining integer, reset_ms bigint)
    language plpgsql as $$
    declare
      v_head bigint;
      v_next bigint;
      v_now timestamptz;
      v_admitted integer;
      v_oldest timestamptz;
      v_reset_ms bigint;
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
      -- The i-th request counts itself and the admitted ones before it; a refused one sees the
      -- window full.
      return query
        select i <= v_admitted,
               greatest(p_limit - (v_next - v_head + least(i, v_admitted)), 0)::integer,
               v_reset_ms
          from generate_series(1, p_count) i
         order by i;
    end
    $$;
  `);
}
