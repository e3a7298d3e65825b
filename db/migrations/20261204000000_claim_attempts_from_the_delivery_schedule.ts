/**
 * Webhook attempts are claimed by the workers straight from their schedule, `webhook_deliveries`,
 * instead of one pg-boss job per attempt (workers/webhook-dispatcher.ts). Every delivery already
 * named its next attempt and when it is due (`next_attempt_id`, `next_attempt_at`); a job per
 * attempt repeated that in a second table, cost three more row writes per attempt, and let one
 * poller's batch wait on its slowest endpoint. Now:
 *
 * - `webhook_subscriptions.origin`: the endpoint's scheme and authority, lower-cased, generated from
 *   `endpoint_url`. Attempts to one origin run at most a few at a time per worker, so a slow or
 *   silent origin costs time only to its own deliveries.
 * - `webhook_deliveries.trace`: the trace (and request id) of what published or redelivered the
 *   delivery, which its attempts continue (db/platform/tracing.ts); before, each job carried it.
 * - Two partial indexes: the attempts due (or scheduled), by time, and the attempts in flight, by
 *   start, for the takeover of an attempt whose worker died.
 * - `publish_event()` makes the deliveries and wakes the workers (one NOTIFY per transaction,
 *   merged by PostgreSQL); `queue_delivery_attempt()` (a redelivery) only wakes them. The attempts'
 *   jobs queued by the previous release are deleted: their attempts are on the schedule, and the
 *   workers claim them from there; deliveries older than named attempts get theirs named.
 */
import type { Knex } from 'knex';

/** What workers LISTEN on (db/queries/webhook-deliveries.ts names it too). */
const CHANNEL = 'webhook_attempts_due';

const PUBLISH_EVENT_WITH_JOBS = `
    create or replace function publish_event(p_event_id uuid) returns void language plpgsql as $$
    declare
      v_delivery record;
    begin
      for v_delivery in
        insert into webhook_deliveries (event_id, subscription_id, partner_id, next_attempt_id, next_attempt_at)
        select e.id, s.id, s.partner_id, gen_random_uuid(), now()
          from events e
          join venue_grants g on g.venue_id = e.venue_id
          join webhook_subscriptions s on s.partner_id = g.partner_id
         where e.id = p_event_id and s.is_active and e.event_type = any (s.event_types)
           and venue_authorized(g.partner_id, e.venue_id)
        on conflict (event_id, subscription_id) do nothing
        returning id, next_attempt_id
      loop
        perform queue_delivery_attempt(v_delivery.id, v_delivery.next_attempt_id);
      end loop;
    end
    $$`;

const PUBLISH_EVENT_ON_SCHEDULE = `
    create or replace function publish_event(p_event_id uuid) returns void language plpgsql as $$
    begin
      insert into webhook_deliveries (event_id, subscription_id, partner_id, next_attempt_id, next_attempt_at, trace)
      select e.id, s.id, s.partner_id, gen_random_uuid(), now(), nullif(current_setting('booking.trace', true), '')
        from events e
        join venue_grants g on g.venue_id = e.venue_id
        join webhook_subscriptions s on s.partner_id = g.partner_id
       where e.id = p_event_id and s.is_active and e.event_type = any (s.event_types)
         and venue_authorized(g.partner_id, e.venue_id)
      on conflict (event_id, subscription_id) do nothing;
      if found then
        perform pg_notify('${CHANNEL}', '');
      end if;
    end
    $$`;

const QUEUE_WITH_JOB = `
    create or replace function queue_delivery_attempt(p_delivery_id uuid, p_attempt_id uuid)
    returns void language plpgsql as $$
    begin
      perform from send_job_webhook_deliver(
        jsonb_build_object('delivery_id', p_delivery_id, 'attempt_id', p_attempt_id) || job_trace(),
        null,
        nullif(current_setting('booking.webhook_attempt_lease_seconds', true), '')::integer);
    end
    $$`;

const QUEUE_ON_SCHEDULE = `
    create or replace function queue_delivery_attempt(p_delivery_id uuid, p_attempt_id uuid)
    returns void language plpgsql as $$
    begin
      -- The attempt is on the schedule already (its delivery names it, due now): wake the workers.
      perform pg_notify('${CHANNEL}', '');
    end
    $$`;

export async function up(knex: Knex): Promise<void> {
  // (\\? is a literal question mark: knex.raw reads a bare one as a binding.)
  await knex.raw(`
    alter table webhook_subscriptions add column origin text not null
      generated always as (lower(substring(endpoint_url from '^[A-Za-z][A-Za-z0-9+.-]*://[^/\\?#]*'))) stored;
    alter table webhook_deliveries add column trace text;
    create index webhook_deliveries_due_idx on webhook_deliveries (next_attempt_at)
      where next_attempt_id is not null;
    create index webhook_deliveries_in_flight_idx on webhook_deliveries (last_attempt_at)
      where status = 'pending' and next_attempt_id is null and attempts > 0;
  `);
  await knex.raw(PUBLISH_EVENT_ON_SCHEDULE);
  await knex.raw(QUEUE_ON_SCHEDULE);
  // Deliveries fanned out before attempts were named (their jobs carried only the delivery) get
  // their next attempt named, so that the schedule has it.
  await knex.raw(`
    update webhook_deliveries
       set next_attempt_id = gen_random_uuid(), next_attempt_at = coalesce(next_attempt_at, now())
     where next_attempt_id is null and (status = 'failed' or (status = 'pending' and attempts = 0))
  `);
  // pg-boss's schema exists once a migrate has run before (it is installed after these migrations).
  await knex.raw(`
    do $$
    begin
      if to_regclass('pgboss.job') is not null then
        delete from pgboss.job where name = 'webhook.deliver' and state < 'active';
      end if;
    end
    $$;
    drop function if exists send_job_webhook_deliver(jsonb, timestamptz, integer);
  `);
}

export async function down(knex: Knex): Promise<void> {
  // The send function it calls comes back with the previous release's migrate, which installs one
  // per job kind after the migrations.
  await knex.raw(QUEUE_WITH_JOB);
  await knex.raw(PUBLISH_EVENT_WITH_JOBS);
  await knex.raw(`
    drop index webhook_deliveries_in_flight_idx;
    drop index webhook_deliveries_due_idx;
    alter table webhook_deliveries drop column trace;
    alter table webhook_subscriptions drop column origin;
  `);
}
