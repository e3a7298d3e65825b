-- lock_idempotency_key(partner, key): first thing in every keyed write: takes the key's
-- transaction-scoped advisory lock, then returns the key's record, or null when the key is unused
-- (a retry of a committed write replays the record). The write that found it unused stores its
-- result under the key as its last step (store_idempotency_key()), so each key is written once, in
-- one insert: the claim used to insert the key first and update it with the result at the end, two
-- heap records a key (writing it once saves ~4% of a hold → confirm cycle's WAL, docs/BENCHMARKS.md).
--
-- A concurrent retry of a write still in flight waits on the lock until that transaction ends, and
-- then reads in a fresh snapshot (each statement of a volatile function takes one) what it
-- committed: the effect never runs twice, and a write that fails rolls back and leaves the key
-- unused. The lock is in the two-key space, apart from the reservation windows' single keys
-- (take_advisory_locks()), under the class 1768188793 ('idky'); the second key is a 32-bit hash of
-- the partner and the key, so two keys that share it only queue one behind the other, and as every
-- keyed write takes one key lock before any other, no two of them wait on each other in a cycle.
-- The unique key stays the last word: a write of the previous release claims its key without this
-- lock (claim_idempotency_key(), previous-release.sql), and when it wins, the store's unique
-- violation sends this write round again (db/postgres/pg-errors.ts), to replay what it committed.
create or replace function lock_idempotency_key(p_partner_id uuid, p_key text)
returns idempotency_keys
language plpgsql as $$
declare
  v_record idempotency_keys;
begin
  perform pg_advisory_xact_lock(1768188793, hashtext(p_partner_id::text || '/' || p_key));
  select k.* into v_record from idempotency_keys k where k.partner_id = p_partner_id and k.key = p_key;
  return v_record;
end
$$;
