-- hold_group_json(group): a hold group and its holds (in item order, each with its booking when it
-- has one) as data, and the database's clock when it was read (`read_at`: an ACTIVE group reads
-- EXPIRED from its hold_expiry_at on): what its writes store under their keys, and what the API
-- presents.
--
-- (PL/pgSQL, not SQL: its plan is kept for the session rather than made again at every call.)
create or replace function hold_group_json(p_group_id uuid) returns jsonb
language plpgsql stable as $$
begin
  return (
    select jsonb_build_object(
      'read_at', now(),
      'group', to_jsonb(g),
      'holds', (select jsonb_agg(jsonb_build_object('hold', to_jsonb(h), 'booking', to_jsonb(b)) order by h.item_index)
                  from holds h left join bookings b on b.hold_id = h.id
                 where h.hold_group_id = g.id))
      from hold_groups g where g.id = p_group_id
  );
end
$$;
