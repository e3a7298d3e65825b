/**
 * Waiting for `npm run migrate` at start-up. `web` and `worker` started on a database that was
 * never migrated, or that a migrate is changing right now (a deploy whose release phase runs beside
 * the new processes, an orchestrator that starts them all at once), died with one fatal line
 * (pg-boss not installed) or served on a schema half made. They now wait, live but not ready and
 * saying why, until every migration this code ships is applied and no migrate is under way.
 */
import type { Logger } from '../platform/log.ts';
import type { Knex } from '../postgres/knex.ts';
import { isDatabaseUnavailable } from '../postgres/pg-errors.ts';
import { tries } from '../postgres/wait-for-database.ts';
import { migrationUnderWay } from './migration-lock.ts';
import { pendingMigrations } from './readiness.ts';

/**
 * Resolves once the schema of `db` is this code's; until then tells `onWaiting` why it is not
 * (a readiness reason), logging it on the first look and every tenth. Rejects on abort, or on an
 * error that is not the database being unavailable (which it waits out).
 */
export async function waitForMigrations(
  db: Knex,
  log: Logger,
  { signal, onWaiting }: { signal?: AbortSignal | undefined; onWaiting?: (reason: string) => void } = {},
): Promise<void> {
  for await (const looks of tries(signal)) {
    const reason = await schemaNotReady(db).catch((err: unknown) => {
      if (isDatabaseUnavailable(err)) return 'starting: the database does not answer';
      throw err;
    });
    if (reason === undefined) {
      if (looks > 1) log.info({ looks }, 'the migrations are applied');
      return;
    }
    onWaiting?.(reason);
    if (looks % 10 === 1) log.warn({ reason, looks }, 'waiting for the migrations');
  }
}

/** Why the schema is not this code's yet, or undefined when it is. */
function schemaNotReady(db: Knex): Promise<string | undefined> {
  return db.transaction(async (trx) => {
    if (await migrationUnderWay(trx)) return 'starting: waiting for npm run migrate to finish';
    const pending = await pendingMigrations(trx);
    if (pending.length === 0) return undefined;
    return `starting: waiting for npm run migrate (${pending.length} migration${pending.length === 1 ? '' : 's'} pending)`;
  });
}
