-- series_json(series): a series as data: its pattern as created, its hold group, every occurrence
-- in index order with its hold and that hold's booking (once it has them), and the database's clock
-- when it was read (`read_at`: a held occurrence reads EXPIRED from its group's hold_expiry_at on).
-- What its writes store under their keys, and what the API presents.
--
-- (PL/pgSQL, not SQL: its plan is kept for the session rather than made again at every call.)
create or replace function series_json(p_series_id uuid) returns jsonb
language plpgsql stable as $$
begin
  return (
    select jsonb_build_object(
      'read_at', now(),
      'series', to_jsonb(s),
      'group', (select to_jsonb(g) from hold_groups g where g.id = s.hold_group_id),
      'occurrences', (select jsonb_agg(jsonb_build_object('occurrence', to_jsonb(o), 'hold', to_jsonb(h),
                                                         'booking', to_jsonb(b)) order by o.occurrence_index)
                        from series_occurrences o
                        left join holds h on h.id = o.hold_id
                        left join bookings b on b.hold_id = o.hold_id
                       where o.series_id = s.id))
      from series s where s.id = p_series_id
  );
end
$$;
