/**
 * Sending a job from SQL. The hot writes (a hold, a confirm) run as one database function each, one
 * round trip, so they cannot call `boss.send()`. `npm run migrate` therefore installs, per job kind
 * that SQL sends, a SQL function `send_job_<kind>(data jsonb, start_after timestamptz, expire_seconds integer)`
 * (the last two optional) whose body is
 * the very statement pg-boss's `send()` runs (its `insertJobs` plan for the queue's table, with the
 * transactional NOTIFY for a queue that notifies), the kind's options (db/jobs/kinds.ts) filled in.
 * It is generated again on every migrate, so it always matches the pinned pg-boss and the kinds'
 * declarations; test/db/sql-send.test.ts checks a job sent this way against one from `send()`.
 * The function is PL/pgSQL, not SQL, because PostgreSQL (before 18) plans a SQL function's body on
 * every call, and PL/pgSQL once per connection: the DESIGN's "send() is the hold's biggest database
 * cost" was mostly the planning of this statement (measured: 0.8 ms a call as SQL, 0.2 as PL/pgSQL).
 */
import { insertJobs } from 'pg-boss/dist/plans.js';
import type { Knex } from '../postgres/knex.ts';
import { JOB_KINDS, type JobKind } from './kinds.ts';

/** pg-boss's schema (its default; the service never configures another). */
const BOSS_SCHEMA = 'pgboss';

/** Where pg-boss's send() statement takes its one parameter, the JSON array of jobs. */
const JOBS_PARAMETER = '$1::text::json';

/** The SQL function that sends a job of `kind`: `send_job_hold_expire` for `hold.expire`. */
export function sendFunctionOf(kind: JobKind): string {
  return `send_job_${kind.name.replace(/[^a-z0-9]+/g, '_')}`;
}

/**
 * (Re)creates the send function of every job kind that SQL sends (`sentFromSql`); run by `npm run
 * migrate` after the queues.
 */
export async function installSendFunctions(db: Knex): Promise<void> {
  for (const kind of JOB_KINDS.filter((k) => k.sentFromSql)) {
    const { rows } = await db.raw<{ rows: { table_name: string }[] }>(
      `select table_name from ${BOSS_SCHEMA}.queue where name = ?`,
      [kind.name],
    );
    const table = rows[0]?.table_name;
    if (!table) throw new Error(`queue ${kind.name} does not exist; create the queues first`);
    await db.raw(sendFunctionSql(kind, table));
  }
}

/**
 * A kind whose expiry is a constant has it built in; one whose expiry depends on the configuration
 * (webhook.deliver's lease) takes it as `p_expire_seconds`, or, without it, keeps the queue's
 * default (what `npm run migrate` set from its configuration).
 */
function sendFunctionSql(kind: JobKind, table: string): string {
  const send = insertJobs(BOSS_SCHEMA, { table, name: kind.name, returnId: true, notify: kind.notify });
  if (send.split(JOBS_PARAMETER).length !== 2) {
    throw new Error(`pg-boss's send statement no longer takes ${JOBS_PARAMETER}; review db/jobs/sql-send.ts`);
  }
  const expiry = typeof kind.expireInSeconds === 'number' ? String(kind.expireInSeconds) : 'null';
  // What send() would serialise for `send(name, data, { expireInSeconds, startAfter })`: the keys
  // it leaves out are null in pg-boss's recordset, as they are for send(). A start time goes as ISO
  // 8601 text, which pg-boss casts back to timestamptz.
  const job = `json_build_array(json_build_object(
      'data', p_data, 'startAfter', to_json(p_start_after) #>> '{}', 'singletonOffset', 0,
      'expireInSeconds', coalesce(p_expire_seconds, ${expiry})))::text::json`;
  return `
    create or replace function ${sendFunctionOf(kind)}(
      p_data jsonb, p_start_after timestamptz default null, p_expire_seconds integer default null)
    returns setof uuid language plpgsql volatile as $send$
    begin
      return query ${send.replace(JOBS_PARAMETER, job)};
    end
    $send$`;
}
