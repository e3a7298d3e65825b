/**
 * The trace of the request that causes a job travels in the job's payload (db/platform/tracing.ts):
 * the jobs the database sends itself — a delivery's first attempt, from `publish_event()` (and a
 * redelivery's, both through `queue_delivery_attempt()`), and a hold's expiry, from `place_hold()`
 * — take it from the transaction's `booking.trace` setting,
 * through `job_trace()`. The hold and confirm functions are single statements, so the setting
 * cannot come from a statement before them: their `_traced` twins set it, then do exactly what the
 * function does.
 */
import type { Knex } from 'knex';
import { replaceInFunction } from '../postgres/function-definition.ts';

/** The line of each function that changes, before and after: the job's payload gains the trace. */
const CHANGES = [
  {
    fn: 'publish_event(uuid)',
    untraced: [
      'perform from send_job_webhook_deliver(',
      "          jsonb_build_object('delivery_id', v_delivery.id, 'attempt_id', v_delivery.next_attempt_id), null,",
      "          nullif(current_setting('booking.webhook_attempt_lease_seconds', true), '')::integer);",
    ].join('\n'),
    traced: 'perform queue_delivery_attempt(v_delivery.id, v_delivery.next_attempt_id);',
  },
  {
    fn: 'place_hold(uuid, text, text, uuid, uuid, timestamptz, integer, text)',
    untraced:
      "perform from send_job_hold_expire(jsonb_build_object('hold_id', v_hold.id), v_hold.hold_expiry_at);",
    traced:
      "perform from send_job_hold_expire(jsonb_build_object('hold_id', v_hold.id) || job_trace(), v_hold.hold_expiry_at);",
  },
];

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    -- {"trace": {...}} when the transaction set booking.trace (a JSON object), else {}.
    create function job_trace() returns jsonb language sql stable as $$
      select case when coalesce(current_setting('booking.trace', true), '') = '' then '{}'::jsonb
                  else jsonb_build_object('trace', current_setting('booking.trace', true)::jsonb) end
    $$;

    -- A delivery attempt's job, as publish_event() queues a first attempt and a redelivery its
    -- first (db/queries/webhook-deliveries.ts): the attempt lease of the connection's process,
    -- the trace of the transaction.
    create function queue_delivery_attempt(p_delivery_id uuid, p_attempt_id uuid) returns void
    -- plpgsql: the send function it calls is made by npm run migrate after the migrations.
    language plpgsql as $$
    begin
      perform from send_job_webhook_deliver(
        jsonb_build_object('delivery_id', p_delivery_id, 'attempt_id', p_attempt_id) || job_trace(),
        null,
        nullif(current_setting('booking.webhook_attempt_lease_seconds', true), '')::integer);
    end
    $$;

    -- Publishing from a transaction written in TypeScript (db/rules/events.ts) says the trace too.
    create function publish_event(p_event_id uuid, p_trace text) returns void language plpgsql as $$
    begin
      if p_trace is not null then perform set_config('booking.trace', p_trace, true); end if;
      perform publish_event(p_event_id);
    end
    $$;

    create function place_hold_traced(
      p_trace text, p_partner_id uuid, p_key text, p_fingerprint text, p_venue_id uuid,
      p_resource_id uuid, p_start timestamptz, p_minutes integer, p_customer_phone text,
      out replayed boolean, out operation text, out fingerprint text, out result jsonb, out response json
    ) language plpgsql as $$
    begin
      perform set_config('booking.trace', p_trace, true);
      select * into replayed, operation, fingerprint, result, response
        from place_hold(p_partner_id, p_key, p_fingerprint, p_venue_id, p_resource_id, p_start,
                        p_minutes, p_customer_phone);
    end
    $$;

    create function confirm_hold_traced(
      p_trace text, p_partner_id uuid, p_key text, p_fingerprint text, p_hold_id uuid,
      p_payment_reference text, p_customer_name text, p_customer_phone text, p_customer_email text,
      p_use_package_credit boolean,
      out replayed boolean, out operation text, out fingerprint text, out result jsonb, out response json
    ) language plpgsql as $$
    begin
      perform set_config('booking.trace', p_trace, true);
      select * into replayed, operation, fingerprint, result, response
        from confirm_hold(p_partner_id, p_key, p_fingerprint, p_hold_id, p_payment_reference,
                          p_customer_name, p_customer_phone, p_customer_email, p_use_package_credit);
    end
    $$;
  `);
  for (const { fn, untraced, traced } of CHANGES) await replaceInFunction(knex, fn, untraced, traced);
}

export async function down(knex: Knex): Promise<void> {
  for (const { fn, untraced, traced } of CHANGES) await replaceInFunction(knex, fn, traced, untraced);
  await knex.raw(`
    drop function confirm_hold_traced(text, uuid, text, text, uuid, text, text, text, text, boolean);
    drop function place_hold_traced(text, uuid, text, text, uuid, uuid, timestamptz, integer, text);
    drop function publish_event(uuid, text);
    drop function queue_delivery_attempt(uuid, uuid);
    drop function job_trace();
  `);
}
