/**
 * knex's PostgreSQL client, with every parameterised statement sent as a named prepared statement,
 * so each connection parses and plans it once instead of on every execution. On this machine class
 * that made a hold + confirm cycle about 45% faster (docs/BENCHMARKS.md): planning, not executing,
 * was most of the database's work. Statements without bindings (migrations, BEGIN/COMMIT, multi-
 * statement DDL) stay unnamed, as PostgreSQL cannot prepare several commands at once.
 *
 * A prepared statement's result type is fixed. When a migration changes a table a statement reads
 * with `*`, PostgreSQL refuses the old statement once ("cached plan must not change result type");
 * the statement is then renamed on that connection so the next use prepares it afresh, and a
 * statement outside a transaction is retried at once. Inside a transaction the error stands (the
 * transaction is aborted) and the caller's retry succeeds: `transaction()` (db/postgres/
 * transaction.ts) runs it again by itself.
 */
import { createHash } from 'node:crypto';
// knex exposes its dialect clients only through this internal path; it is the documented way to
// extend a dialect (a custom `client` class in the knex config).
// @ts-expect-error -- the dialect module ships no type declarations
import ClientPg from 'knex/lib/dialects/postgres/index.js';
import type pg from 'pg';

/** SQLSTATE 0A000 with this message: a prepared statement outlived a change of its result type. */
const STALE_PLAN = /cached plan must not change result type/;

interface QueryObject {
  sql?: string;
  bindings?: unknown[];
  options?: Record<string, unknown>;
}

type Connection = pg.Client & { __knexTxId?: string; __statementGeneration?: Map<string, number> };

/**
 * Statement names by SQL text, so that a statement's hash is taken once per process rather than on
 * every execution (the SQL of a hold runs to kilobytes). The texts come from the code, a bounded
 * set; a process that somehow met more starts the map afresh rather than grow it without end.
 */
const names = new Map<string, string>();
const MAX_NAMES = 5_000;

function statementHash(sql: string): string {
  let hash = names.get(sql);
  if (hash === undefined) {
    if (names.size >= MAX_NAMES) names.clear();
    hash = createHash('sha1').update(sql).digest('base64url').slice(0, 24);
    names.set(sql, hash);
  }
  return hash;
}

const Base = ClientPg as new (config: unknown) => {
  _query(connection: Connection, obj: QueryObject): Promise<unknown>;
};

/** The knex client class to pass as `client` in the knex configuration. */
export class PreparedPgClient extends Base {
  override async _query(connection: Connection, obj: QueryObject): Promise<unknown> {
    if (!obj.sql || !obj.bindings?.length) return super._query(connection, obj);
    const hash = statementHash(obj.sql);
    const generations = (connection.__statementGeneration ??= new Map());
    const named = () => ({
      ...obj,
      options: { ...obj.options, name: `k${hash}.${generations.get(hash) ?? 0}` },
    });
    try {
      return await super._query(connection, named());
    } catch (err) {
      if (!STALE_PLAN.test((err as Error).message)) throw err;
      generations.set(hash, (generations.get(hash) ?? 0) + 1);
      if (connection.__knexTxId) throw err;
      return super._query(connection, named());
    }
  }
}
