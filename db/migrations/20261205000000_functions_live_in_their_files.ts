/**
 * From here on every SQL function's current text is its file in `db/functions/`, which
 * `npm run migrate` installs after the migrations (db/schema/sources.ts); migrations keep tables,
 * indexes and data, and drop a function whose signature changes. What this one removes, nothing of
 * this release or the previous one uses:
 *
 * - webhook.fanout jobs: events are published in the transaction that records them. Any job still
 *   waiting (queued by a release from before that) has its event published here, then goes.
 * - take_rate_limit_token(): the one-request form; web has sent batches since the previous release.
 * - The SQL send functions of the job kinds that no SQL sends (only hold.expire's stays, made by
 *   `npm run migrate` from pg-boss's own send()).
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  // pg-boss's schema exists once a migrate has run before (it is installed after the migrations).
  await knex.raw(`
    do $$
    begin
      if to_regclass('pgboss.job') is not null then
        perform publish_event((j.data ->> 'event_id')::uuid)
           from pgboss.job j
          where j.name = 'webhook.fanout' and j.state < 'active'
            and exists (select from events e where e.id = (j.data ->> 'event_id')::uuid);
        delete from pgboss.job where name = 'webhook.fanout' and state < 'active';
      end if;
    end
    $$;
    drop function if exists send_job_webhook_fanout(jsonb, timestamptz, integer);
    drop function if exists send_job_waitlist_promote(jsonb, timestamptz, integer);
    drop function if exists send_job_waitlist_expire(jsonb, timestamptz, integer);
    drop function if exists send_job_retention_prune(jsonb, timestamptz, integer);
    drop function take_rate_limit_token(uuid, integer);
  `);
}

export async function down(knex: Knex): Promise<void> {
  // The functions only their files create (record_event() and record_waitlist_event()) go too, so
  // that the migrations before can drop the tables they take rows of.
  await knex.raw(`
    drop function if exists record_waitlist_event(waitlist_entries, timestamptz, timestamptz, integer, text);
    drop function if exists record_event(text, uuid, uuid, uuid, uuid, uuid, jsonb, text);
    create function take_rate_limit_token(p_api_key_id uuid, p_limit integer,
      out allowed boolean, out remaining integer, out reset_ms bigint)
    language sql as $$
      select t.allowed, t.remaining, t.reset_ms from take_rate_limit_tokens(p_api_key_id, p_limit, 1) t
    $$;
  `);
}
