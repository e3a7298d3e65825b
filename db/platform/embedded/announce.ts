/**
 * How `npm start` tells the rest of its checkout which embedded database it runs (CONTRACT.md,
 * "Reaching the laptop database"): `.data/start.json`, `{"database_url", "pid"}`, written once the
 * database is migrated and removed when start stops. `npm run ops` without DATABASE_URL reads it;
 * a file left behind by a start that died is ignored, since its pid no longer runs. Readable by
 * its owner only: the URL carries the embedded server's password.
 */
import { readFileSync } from 'node:fs';
import { rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { DATA_DIR } from './server.ts';

const FILE = path.join(DATA_DIR, 'start.json');

/** Announces `databaseUrl` as this process's; `stop()` takes it back. */
export async function announceStartDatabase(databaseUrl: string): Promise<{ stop(): Promise<void> }> {
  await writeFile(FILE, `${JSON.stringify({ database_url: databaseUrl, pid: process.pid })}\n`, {
    mode: 0o600,
  });
  return {
    async stop() {
      // Only our own: a second start in the same checkout may have announced since.
      if (announced()?.pid === process.pid) await rm(FILE, { force: true });
    },
  };
}

/** The database a running `npm start` of this checkout announced, if one runs. */
export function startDatabaseUrl(): string | undefined {
  const found = announced();
  return found && isRunning(found.pid) ? found.database_url : undefined;
}

function announced(): { database_url: string; pid: number } | undefined {
  try {
    const parsed = JSON.parse(readFileSync(FILE, 'utf8')) as { database_url?: unknown; pid?: unknown };
    if (typeof parsed.database_url === 'string' && Number.isSafeInteger(parsed.pid)) {
      return { database_url: parsed.database_url, pid: parsed.pid as number };
    }
  } catch {
    // none, or unreadable: nothing announced
  }
  return undefined;
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM'; // runs, as another user
  }
}
