import type { Knex } from '../../db/postgres/knex.ts';

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
