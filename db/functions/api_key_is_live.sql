-- api_key_is_live(key): whether an API key works now: not revoked, and not past its expiry (a
-- replaced key works until the end of its grace, which is its expiry). The one definition that
-- authentication and the availability streams' checks share.
create or replace function api_key_is_live(k api_keys) returns boolean
language sql stable as $$
  select k.revoked_at is null and (k.expires_at is null or k.expires_at > now())
$$;
