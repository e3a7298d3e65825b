-- job_trace(): what a job sent from SQL carries of the request (or job) that caused it: the
-- transaction's `booking.trace` setting (the W3C traceparent and the request id, as JSON) under
-- `trace`, or nothing. The top-level functions set it from their p_trace argument
-- (db/platform/tracing.ts writes it).
create or replace function job_trace() returns jsonb
language sql stable as $$
  select case when coalesce(current_setting('booking.trace', true), '') = '' then '{}'::jsonb
              else jsonb_build_object('trace', current_setting('booking.trace', true)::jsonb) end
$$;
