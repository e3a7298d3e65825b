-- queue_delivery_attempt(delivery, attempt): a redelivery has put its delivery back in line with
-- its first attempt due now (db/queries/webhook-deliveries.ts `requeue`): this wakes the workers'
-- dispatchers when the transaction commits, as publish_event() does for new deliveries.
create or replace function queue_delivery_attempt(p_delivery_id uuid, p_attempt_id uuid) returns void
language plpgsql as $$
begin
  perform pg_notify('webhook_attempts_due', '');
end
$$;
