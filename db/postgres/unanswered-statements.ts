/**
 * A connection whose statement goes unanswered is cut. PostgreSQL ends any statement at its
 * `statement_timeout` and answers with an error, so a statement with no answer at all well after
 * that has met a connection that no longer reaches the server: a network partition, where nothing
 * is refused or reset and the kernel goes on resending for a quarter of an hour. Until then the
 * request waiting for it hangs, and the connection, back in the pool, would hold the next caller's
 * statement behind the lost one. Cutting the socket fails the statement as a lost connection (web
 * answers 503, a job is retried), and the pool opens a fresh connection for the next caller.
 *
 * node-postgres's own `query_timeout` fails the caller but keeps the connection, busy with the
 * lost statement, so it is not used.
 */
import type pg from 'pg';
import type { Logger } from '../platform/log.ts';

/** After its statement timeout, how long a statement's answer may take to come back. */
export const ANSWER_MARGIN_MS = 5_000;

type QueryCallback = (err: Error | null, result?: unknown) => void;

interface Internals {
  connection: { stream: { destroy(err?: Error): void } };
}

/**
 * Makes `conn` cut itself when a statement sent through it has had no answer for `ms`. Wraps the
 * callback form of `query()`, the one knex uses for every statement.
 */
export function cutWhenUnanswered(conn: pg.Client, ms: number, log: Logger | undefined): void {
  const query = conn.query.bind(conn) as (...args: unknown[]) => unknown;
  const watched = (...args: unknown[]): unknown => {
    const [config, callback] = args;
    if (args.length !== 2 || typeof callback !== 'function') return query(...args);
    const timer = setTimeout(() => {
      log?.warn({ waited_ms: ms }, 'a statement had no answer from the database: its connection is cut');
      (conn as unknown as Internals).connection.stream.destroy();
    }, ms);
    return query(config, (err: Error | null, result?: unknown) => {
      clearTimeout(timer);
      (callback as QueryCallback)(err, result);
    });
  };
  conn.query = watched as typeof conn.query;
}
