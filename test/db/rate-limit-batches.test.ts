/**
 * Rate-limit tokens in batches: `take_rate_limit_tokens()` admits a batch exactly as the same
 * requests one after the other, and `KeyAuthenticator` sends the requests of a key that arrive
 * while its statement runs as the next statement, in arrival order, in the context of the request
 * that leads the batch.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import test from 'ava';
import type { Knex } from '../../db/postgres/knex.ts';
import { KeyAuthenticator } from '../../db/queries/key-authenticator.ts';
import { hashApiKey } from '../../db/rules/api-key.ts';
import { useTestDatabase } from '../helpers/database.ts';
import { makePartner } from '../helpers/factories.ts';

const database = useTestDatabase(test);

interface Verdict {
  allowed: boolean;
  remaining: number;
  reset_ms: number;
}

async function keyIdOf(db: Knex, partnerId: string): Promise<string> {
  return (await db('api_keys').where({ partner_id: partnerId }).first('id')).id;
}

async function take(db: Knex, keyId: string, limit: number, count: number): Promise<Verdict[]> {
  const { rows } = await db.raw<{ rows: Verdict[] }>('select * from take_rate_limit_tokens(?, ?, ?)', [
    keyId,
    limit,
    count,
  ]);
  return rows;
}

/** The sizes of the batches sent for a key hash, as they leave for the database. */
function batchSizes(db: Knex, keyHash: string): number[] {
  const sizes: number[] = [];
  db.on('query', (query: { sql: string; bindings?: unknown[] }) => {
    if (query.sql.includes('take_rate_limit_tokens') && query.bindings?.[1] === keyHash) {
      sizes.push(query.bindings[0] as number);
    }
  });
  return sizes;
}

test('a batch is admitted as its requests one by one: the first while there is room, in order', async (t) => {
  const { db } = database();
  const { partnerId } = await makePartner(db, { rateLimit: 5 });
  const keyId = await keyIdOf(db, partnerId);

  const first = await take(db, keyId, 5, 3);
  t.deepEqual(
    first.map((v) => [v.allowed, v.remaining]),
    [
      [true, 4],
      [true, 3],
      [true, 2],
    ],
  );
  t.true(
    first.every((v) => v.reset_ms === 60_000),
    'the first of an empty window leaves in 60 s',
  );

  const second = await take(db, keyId, 5, 4);
  t.deepEqual(
    second.map((v) => [v.allowed, v.remaining]),
    [
      [true, 1],
      [true, 0],
      [false, 0],
      [false, 0],
    ],
  );
  const resets = new Set(second.map((v) => v.reset_ms));
  t.is(resets.size, 1, 'one reset for the batch');
  t.true([...resets][0]! > 0 && [...resets][0]! <= 60_000);

  const window = await db('rate_limit_windows').where({ api_key_id: keyId }).first();
  t.is(window.next_seq - window.head_seq, 5, 'refused requests are not recorded');
  const hits = await db('rate_limit_hits').where({ api_key_id: keyId }).count<{ n: string }[]>('* as n');
  t.is(Number(hits[0]!.n), 5);
});

test('hits that left the window make room within a batch; the batch shares the oldest hit’s reset', async (t) => {
  const { db } = database();
  const { partnerId } = await makePartner(db, { rateLimit: 3 });
  const keyId = await keyIdOf(db, partnerId);
  await take(db, keyId, 3, 3);
  // The first two hits left the window; the third is 59 s old.
  await db.raw(
    `update rate_limit_hits set hit_at = now() - case when seq < 2 then interval '61 seconds'
                                                      else interval '59 seconds' end
      where api_key_id = ?`,
    [keyId],
  );
  const verdicts = await take(db, keyId, 3, 3);
  t.deepEqual(
    verdicts.map((v) => [v.allowed, v.remaining]),
    [
      [true, 1],
      [true, 0],
      [false, 0],
    ],
  );
  t.true(
    verdicts.every((v) => v.reset_ms > 0 && v.reset_ms <= 1000),
    `reset ${verdicts[0]!.reset_ms}`,
  );
});

test('requests of a key that arrive while its statement runs go as the next statement, in arrival order', async (t) => {
  const { db } = database();
  const { apiKey } = await makePartner(db, { rateLimit: 6 });
  const keyHash = hashApiKey(apiKey);
  const sizes = batchSizes(db, keyHash);
  const keys = new KeyAuthenticator(db);

  const verdicts = await Promise.all(Array.from({ length: 10 }, () => keys.authenticate(keyHash)));
  t.deepEqual(sizes, [1, 9], 'the first at once, the nine that came while it ran together');
  t.deepEqual(
    verdicts.map((v) => [v!.allowed, v!.remaining]),
    [
      [true, 5],
      [true, 4],
      [true, 3],
      [true, 2],
      [true, 1],
      [true, 0],
      [false, 0],
      [false, 0],
      [false, 0],
      [false, 0],
    ],
  );
  // Nothing in flight any more: the next request is sent alone, at once.
  await keys.authenticate(keyHash);
  t.deepEqual(sizes, [1, 9, 1]);
});

test('a batch holds at most 100 requests; keys do not wait for each other', async (t) => {
  const { db } = database();
  const busy = await makePartner(db, { rateLimit: 1000 });
  const other = await makePartner(db, { rateLimit: 1000 });
  const busyHash = hashApiKey(busy.apiKey);
  const otherHash = hashApiKey(other.apiKey);
  const busySizes = batchSizes(db, busyHash);
  const otherSizes = batchSizes(db, otherHash);
  const keys = new KeyAuthenticator(db);

  const all = await Promise.all([
    ...Array.from({ length: 250 }, () => keys.authenticate(busyHash)),
    keys.authenticate(otherHash),
  ]);
  t.deepEqual(busySizes, [1, 100, 100, 49]);
  t.deepEqual(otherSizes, [1], 'sent at once, beside the busy key’s statement');
  t.deepEqual(
    all.slice(0, 250).map((v) => v!.remaining),
    Array.from({ length: 250 }, (_, i) => 999 - i),
  );
  t.is(all[250]!.remaining, 999);
});

test('a key that does not work answers undefined to every request of its batch', async (t) => {
  const { db } = database();
  const { partnerId, apiKey } = await makePartner(db, { rateLimit: 10 });
  await db('api_keys').where({ partner_id: partnerId }).update({ revoked_at: db.fn.now() });
  const keys = new KeyAuthenticator(db);
  const verdicts = await Promise.all(Array.from({ length: 4 }, () => keys.authenticate(hashApiKey(apiKey))));
  t.deepEqual(verdicts, [undefined, undefined, undefined, undefined]);
});

/** A database whose statements can be made to fail, and which says in what context each ran. */
function observedDb(db: Knex, scope: AsyncLocalStorage<string>) {
  const contexts: (string | undefined)[] = [];
  let failNext = false;
  const fake = {
    raw: (...args: Parameters<Knex['raw']>) => {
      contexts.push(scope.getStore());
      if (failNext) {
        failNext = false;
        return Promise.reject(new Error('connection lost'));
      }
      return db.raw(...args);
    },
  } as unknown as Knex;
  return { fake, contexts, failOnce: () => (failNext = true) };
}

test('a failed statement fails its own batch only; the next batch is sent', async (t) => {
  const { db } = database();
  const { apiKey } = await makePartner(db, { rateLimit: 10 });
  const keyHash = hashApiKey(apiKey);
  const { fake, failOnce } = observedDb(db, new AsyncLocalStorage());
  const keys = new KeyAuthenticator(fake);
  failOnce();
  const results = await Promise.allSettled(Array.from({ length: 3 }, () => keys.authenticate(keyHash)));
  t.is(results[0]!.status, 'rejected', 'the first went alone, and failed');
  t.deepEqual(
    results.slice(1).map((r) => (r.status === 'fulfilled' ? r.value!.remaining : r.status)),
    [9, 8],
  );
});

test('each statement runs in the context of the request that leads its batch', async (t) => {
  const { db } = database();
  const { apiKey } = await makePartner(db, { rateLimit: 10 });
  const keyHash = hashApiKey(apiKey);
  const scope = new AsyncLocalStorage<string>();
  const { fake, contexts } = observedDb(db, scope);
  const keys = new KeyAuthenticator(fake);
  await Promise.all(['a', 'b', 'c'].map((name) => scope.run(name, () => keys.authenticate(keyHash))));
  t.deepEqual(contexts, ['a', 'b'], 'a alone, then b leading b and c');
});
