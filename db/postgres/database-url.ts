/** Helpers for deriving and creating sibling databases on one PostgreSQL server. */
import pg from 'pg';

/** `url` with its database name replaced by `name`. */
export function withDatabase(url: string, name: string): string {
  const u = new URL(url);
  u.pathname = `/${name}`;
  return u.toString();
}

/** Creates database `name` on the server of `adminUrl` unless it exists (safe when raced). */
export async function ensureDatabase(adminUrl: string, name: string, template?: string): Promise<void> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    const { rowCount } = await client.query('select 1 from pg_database where datname = $1', [name]);
    if (rowCount) return;
    const ident = client.escapeIdentifier(name);
    const from = template ? ` template ${client.escapeIdentifier(template)}` : '';
    await client.query(`create database ${ident}${from}`).catch((err: unknown) => {
      // 42P04: another process created it first, which is what we wanted.
      if (!(err instanceof pg.DatabaseError && err.code === '42P04')) throw err;
    });
  } finally {
    await client.end();
  }
}

/** Drops database `name` (closing its connections) if it exists. */
export async function dropDatabase(adminUrl: string, name: string): Promise<void> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    await client.query(`drop database if exists ${client.escapeIdentifier(name)} with (force)`);
  } finally {
    await client.end();
  }
}
