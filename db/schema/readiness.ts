/** Whether a process can serve: the database answers, and its migrations are the ones this code ships. */
import { readdir } from 'node:fs/promises';
import { MIGRATIONS } from './sources.ts';
import type { Knex } from '../postgres/knex.ts';

/** How long the health check waits for the database before calling it unavailable. */
const DATABASE_TIMEOUT_MS = 2000;

/** Whether the database answers a trivial query in time. */
export async function isDatabaseReachable(db: Knex): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), DATABASE_TIMEOUT_MS);
  });
  const probe = db
    .raw('select 1')
    .then(() => true)
    .catch(() => false);
  try {
    return await Promise.race([probe, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * How long an answer of the probes stands. They are unauthenticated and cost queries (readiness
 * three), so anyone could otherwise make the database work as fast as they can send; within this,
 * every caller gets the same answer, and concurrent callers share the one check in flight.
 */
export const PROBE_ANSWER_MS = 1000;

type Answers = Map<string, { at: number; answer: Promise<unknown> }>;
const answers = new WeakMap<Knex, Answers>();

/** `check(db)`'s answer, made at most once per PROBE_ANSWER_MS per pool and kind. */
function cached<T>(db: Knex, kind: string, check: (db: Knex) => Promise<T>): Promise<T> {
  let byKind = answers.get(db);
  if (!byKind) answers.set(db, (byKind = new Map() as Answers));
  const now = performance.now();
  const hit = byKind.get(kind);
  if (hit && now - hit.at < PROBE_ANSWER_MS) return hit.answer as Promise<T>;
  const answer = check(db);
  byKind.set(kind, { at: now, answer });
  return answer;
}

/** Whether the database answers (isDatabaseReachable), as last checked within PROBE_ANSWER_MS. */
export function databaseReachable(db: Knex): Promise<boolean> {
  return cached(db, 'reachable', isDatabaseReachable);
}

/** Why this process cannot serve (unreadyReason), as last checked within PROBE_ANSWER_MS. */
export function readiness(db: Knex): Promise<string | undefined> {
  return cached(db, 'ready', unreadyReason);
}

/** Why this process cannot serve yet, or undefined when it can: the database, then the migrations. */
export async function unreadyReason(db: Knex): Promise<string | undefined> {
  if (!(await isDatabaseReachable(db))) return 'the database does not answer';
  const pending = await pendingMigrations(db).catch(() => undefined);
  if (pending === undefined) return 'the database does not answer';
  return pending.length ? `migrations pending: ${pending.join(', ')}` : undefined;
}

let shipped: Promise<string[]> | undefined;

/** The migrations this code ships that the database (`db`, or a transaction) has not applied. */
export async function pendingMigrations(db: Knex): Promise<string[]> {
  shipped ??= readdir(MIGRATIONS.directory).then((files) => files.filter((f) => f.endsWith('.ts')).sort());
  const files = await shipped;
  const exists = await db.raw<{ rows: { table: string | null }[] }>(
    "select to_regclass('knex_migrations')::text as table",
  );
  if (!exists.rows[0]?.table) return files;
  const applied = new Set(await db('knex_migrations').pluck<string[]>('name'));
  return files.filter((file) => !applied.has(file));
}
