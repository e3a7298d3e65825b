-- claim_idempotency_key(partner, key, operation, fingerprint): claims a partner's key for this
-- transaction, first thing in every keyed write: null when this call claimed it, else the key's
-- record (a retry of a committed write replays it). A concurrent retry of a write still in flight
-- waits on the unique index until that transaction ends, then sees its record, so the effect never
-- runs twice; a write that fails rolls its claim back and leaves the key unused.
create or replace function claim_idempotency_key(p_partner_id uuid, p_key text, p_operation text, p_fingerprint text)
returns idempotency_keys
language plpgsql as $$
declare
  v_record idempotency_keys;
begin
  insert into idempotency_keys (partner_id, key, operation, fingerprint)
    values (p_partner_id, p_key, p_operation, p_fingerprint) on conflict do nothing;
  if found then
    return null;
  end if;
  select k.* into v_record from idempotency_keys k where k.partner_id = p_partner_id and k.key = p_key;
  return v_record;
end
$$;
