-- store_idempotency_key(partner, key, operation, fingerprint, result): the last step of a keyed
-- write that found its key unused (lock_idempotency_key()): records the key with the write's
-- result, in the write's transaction, so the key and the effect commit or roll back together.
create or replace function store_idempotency_key(
  p_partner_id uuid, p_key text, p_operation text, p_fingerprint text, p_result jsonb
) returns void
language sql as $$
  insert into idempotency_keys (partner_id, key, operation, fingerprint, result)
    values (p_partner_id, p_key, p_operation, p_fingerprint, p_result)
$$;
