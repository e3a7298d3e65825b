/**
 * One parameterised statement on a pooled connection, the way `db.raw(sql, bindings)` runs it
 * (the same pool, the same named prepared statement and stale-plan retry of PreparedPgClient, the
 * same `query` and `query-error` events, the same result) without knex's runner around it. For the
 * statements every request makes (authentication, a hold, a confirm, availability): the runner's
 * layers (a builder, its thenable, the runner, the executioner, binding formatting and response
 * processing) cost the web process about 45 µs of CPU per request, a tenth of its whole cost per
 * request at saturation (docs/BENCHMARKS.md). The worker's statements of every webhook event (a
 * claim of its attempts, a batch of outcomes) take it too.
 *
 * Anything this path does not reproduce goes through `db.raw` instead: a transaction (`trx`),
 * DATABASE_POOL_MODE=transaction (its client wraps statements in transactions of their own), SQL
 * with knex's `??` identifiers or `\?` escapes, and an undefined binding (knex refuses those).
 */
import type { Knex } from './knex.ts';
import { PreparedPgClient } from './prepared-pg-client.ts';

interface PooledConnection {
  __knexUid?: string;
}

interface ClientInternals {
  acquireConnection(): Promise<PooledConnection>;
  releaseConnection(connection: PooledConnection): Promise<unknown>;
  _query(connection: PooledConnection, obj: QueryObject): Promise<QueryObject>;
  emit(event: string, ...args: unknown[]): boolean;
}

interface QueryObject {
  sql: string;
  bindings: readonly unknown[];
  options: Record<string, unknown>;
  response?: unknown;
}

/** SQL with `$n` placeholders, by the `?` form the code writes; the texts are a fixed set. */
const positioned = new Map<string, string | null>();
const MAX_TEXTS = 5_000;

/** `sql` with `$1`, `$2`… for its `?`; null for SQL only knex can position (`??`, `\?`). */
function positionedText(sql: string): string | null {
  let text = positioned.get(sql);
  if (text === undefined) {
    if (positioned.size >= MAX_TEXTS) positioned.clear();
    let n = 0;
    text = /\?\?|\\\?/.test(sql) ? null : sql.replace(/\?/g, () => `$${++n}`);
    positioned.set(sql, text);
  }
  return text;
}

/** Runs `sql` with `bindings` as `db.raw` would, and resolves to the driver's result. */
export async function runStatement<R>(
  db: Knex,
  sql: string,
  bindings: readonly unknown[],
): Promise<{ rows: R[]; rowCount: number | null }> {
  const text = db.isTransaction || !(db.client instanceof PreparedPgClient) ? null : positionedText(sql);
  if (text === null || bindings.includes(undefined)) {
    return db.raw<{ rows: R[]; rowCount: number | null }>(sql, bindings as Knex.RawBinding[]);
  }
  const client = db.client as unknown as ClientInternals;
  const connection = await client.acquireConnection();
  try {
    const obj: QueryObject = { sql: text, bindings, options: {} };
    client.emit('query', { __knexUid: connection.__knexUid, method: 'raw', ...obj });
    let done: QueryObject;
    try {
      done = await client._query(connection, obj);
    } catch (err) {
      // As knex words it with `compileSqlOnError: false`: the statement, never its values.
      if (err instanceof Error) err.message = `${text} - ${err.message}`;
      client.emit('query-error', err, { __knexUid: connection.__knexUid, method: 'raw', ...obj });
      throw err;
    }
    return done.response as { rows: R[]; rowCount: number | null };
  } finally {
    await client.releaseConnection(connection);
  }
}
