-- judge_series(venue, resource, first date, start time, minutes, count, interval, excluded dates,
-- lock): every occurrence of a weekly pattern (series_windows()) and what stands in its way, the one
-- judgement that a series' preview and its creation share, so the same pattern gives the same
-- dates, instants and reasons in both (unless the world changed in between). An excluded
-- occurrence (its local date in `p_excluded`) is not judged and shows no window. Every other one gets the first reason
-- that applies: NOT_ON_GRID when its date's grid has no start at the wall-clock time, then the
-- venue's rules (window_rule_refusal(), BEYOND_BOOKING_WINDOW measured against the venue's series
-- window: series_max_advance_days, else max_advance_days), then TAKEN or TRANSFORMATION_CONFLICT
-- (window_claims()). With `p_lock`, the windows still holdable are locked first, all in one
-- ascending order (take_advisory_locks(): two series, groups or holds sharing windows queue, never
-- deadlock), so what is taken is read as it stands for the transaction; a preview reads without.
-- `overdue`: holds past their expiry in an occurrence's way, for the caller to expire first.
--
-- requires: series_windows, window_rule_refusal, reservation_window_locks, take_advisory_locks,
--   window_claims, resource_units
create or replace function judge_series(
  p_venue venues, p_resource resources, p_first_date date, p_start_time time, p_minutes integer,
  p_count integer, p_interval_weeks integer, p_excluded date[], p_lock boolean
) returns table (
  occurrence_index integer, local_date date, slot_start timestamptz, slot_end timestamptz, utc_offset text,
  excluded boolean, reason text, overdue uuid[]
)
language plpgsql as $$
declare
  v_units uuid[] := resource_units(p_resource.id);
  v_window record;
  v_reasons text[] := '{}';
  v_keys bigint[] := '{}';
  v_claim record;
  i integer;
begin
  -- First every window and the venue's rules, gathering the lock keys of the holdable ones ...
  for v_window in select * from series_windows(p_venue, p_resource, p_first_date, p_start_time, p_minutes,
                                               p_count, p_interval_weeks) loop
    if v_window.local_date = any (p_excluded) then
      v_reasons := v_reasons || null::text;
    elsif v_window.slot_start is null then
      v_reasons := v_reasons || 'NOT_ON_GRID'::text;
    else
      v_reasons := v_reasons || window_rule_refusal(p_venue, p_resource, v_window.slot_start, p_minutes,
                                  coalesce(p_venue.series_max_advance_days, p_venue.max_advance_days));
      if p_lock and v_reasons[cardinality(v_reasons)] is null then
        v_keys := v_keys || array(select k from reservation_window_locks(v_units,
                                    tstzrange(v_window.slot_start, v_window.slot_end)) k);
      end if;
    end if;
  end loop;
  if p_lock then
    perform take_advisory_locks(v_keys);
  end if;
  -- ... then, under the locks, what is taken.
  i := 0;
  for v_window in select * from series_windows(p_venue, p_resource, p_first_date, p_start_time, p_minutes,
                                               p_count, p_interval_weeks) loop
    i := i + 1;
    occurrence_index := v_window.occurrence_index;
    local_date := v_window.local_date;
    excluded := v_window.local_date = any (p_excluded);
    -- An excluded occurrence shows no window.
    slot_start := case when not excluded then v_window.slot_start end;
    slot_end := case when not excluded then v_window.slot_end end;
    utc_offset := case when not excluded then v_window.utc_offset end;
    reason := v_reasons[i];
    overdue := null;
    if not excluded and reason is null then
      select c.conflict, c.overdue into v_claim
        from window_claims(p_resource.id, v_units, tstzrange(v_window.slot_start, v_window.slot_end)) c;
      reason := v_claim.conflict;
      overdue := v_claim.overdue;
    end if;
    return next;
  end loop;
end
$$;
