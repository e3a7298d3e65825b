/**
 * knex's PostgreSQL client for DATABASE_POOL_MODE=transaction: behind a transaction-pooling
 * PgBouncer each transaction may run on a different server connection, so nothing may live on a
 * connection between transactions — no named prepared statement (the plain client sends unnamed
 * ones), no startup parameter, no session SET. The settings session mode sends at startup
 * (statement and lock timeouts, the webhook attempt lease) are given to every transaction instead,
 * by SET LOCAL:
 *
 * - a knex transaction sends them in its BEGIN's round trip (`BEGIN; SET LOCAL …`, one simple-
 *   protocol message), so a transaction takes no extra round trip;
 * - a statement outside a transaction is wrapped in one: `BEGIN; SET LOCAL …`, the statement and
 *   `COMMIT` are written back to back on a pipelined connection (node-postgres's `pipeline`), one
 *   round trip instead of three. The pooler keeps the server connection until the COMMIT, as it
 *   would for any transaction. Measured on a busy 2-vCPU machine (medians of a trivial indexed
 *   read): the wrapping adds about 0.1 ms to a statement, directly or through PgBouncer 1.18,
 *   where three round trips added 0.45–0.6 ms.
 *
 * With no settings to give, {@link transactionPoolingClient} is knex's plain client.
 */
// knex exposes its dialect clients only through these internal paths (see prepared-pg-client.ts).
// @ts-expect-error -- the dialect module ships no type declarations
import ClientPg from 'knex/lib/dialects/postgres/index.js';
// @ts-expect-error -- the dialect module ships no type declarations
import TransactionPg from 'knex/lib/dialects/postgres/execution/pg-transaction.js';
import type pg from 'pg';

interface QueryObject {
  sql?: string;
  bindings?: unknown[];
  options?: Record<string, unknown>;
}

type Connection = pg.Client & { __knexTxId?: string };

const BaseClient = ClientPg as new (config: unknown) => {
  _query(connection: Connection, obj: QueryObject): Promise<QueryObject>;
};

const BaseTransaction = TransactionPg as new (...args: unknown[]) => {
  isolationLevel?: string;
  readOnly?: boolean;
  query(connection: Connection, sql: string): Promise<unknown>;
};

/** `SET LOCAL a = 1; SET LOCAL b = 2`: the settings as one string of statements (none: empty). */
export function setLocalStatements(settings: Record<string, number>): string {
  return Object.entries(settings)
    .map(([name, value]) => {
      // Names and values are the service's own (db/postgres/knex.ts); checked all the same, as
      // they are written into SQL.
      if (!/^[a-z_]+(\.[a-z_]+)?$/.test(name) || !Number.isInteger(value)) {
        throw new Error(`not a setting to SET LOCAL: ${name} = ${value}`);
      }
      return `SET LOCAL ${name} = ${value}`;
    })
    .join('; ');
}

/**
 * The knex client class (knex's `client` option) giving every transaction `settings` by SET LOCAL.
 * Its connections must be created with `pipeline: true` when there are settings.
 */
export function transactionPoolingClient(settings: Record<string, number>): unknown {
  const setLocal = setLocalStatements(settings);
  if (!setLocal) return ClientPg;

  class SettingTransaction extends BaseTransaction {
    begin(connection: Connection): Promise<unknown> {
      // knex's own BEGIN, with the same modes, and the settings in the same message.
      const mode = [
        this.isolationLevel ? `ISOLATION LEVEL ${this.isolationLevel}` : '',
        this.readOnly ? 'READ ONLY' : '',
      ]
        .join(' ')
        .trim();
      return this.query(connection, `BEGIN${mode ? ` TRANSACTION ${mode}` : ''}; ${setLocal}`);
    }
  }

  return class TransactionPoolingClient extends BaseClient {
    transaction(...args: unknown[]): unknown {
      return new SettingTransaction(this, ...args);
    }

    override async _query(connection: Connection, obj: QueryObject): Promise<QueryObject> {
      // Inside a knex transaction (its BEGIN included) the settings are already in force.
      if (connection.__knexTxId) return super._query(connection, obj);
      // All three are queued before the first answer comes (pipelining). A failed statement leaves
      // the transaction aborted and the COMMIT then rolls it back; a failed COMMIT (a deferred
      // check) fails the statement. The first failure, in order, is the statement's.
      const sent = [
        super._query(connection, { sql: `BEGIN; ${setLocal}` }),
        super._query(connection, obj),
        super._query(connection, { sql: 'COMMIT' }),
      ];
      const [begin, statement, commit] = await Promise.allSettled(sent);
      for (const step of [begin, statement, commit]) if (step?.status === 'rejected') throw step.reason;
      return (statement as PromiseFulfilledResult<QueryObject>).value;
    }
  };
}
