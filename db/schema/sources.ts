/**
 * Where the schema comes from, for `npm run migrate`, readiness and the schema dump: the knex
 * migrations (tables, indexes, data; append-only) and the SQL functions, each in a file of its own
 * under `db/functions/` that holds its current text. A function is changed by changing its file:
 * `npm run migrate` creates or replaces every function from its file after the migrations, each
 * after the functions its header names (`-- requires: a, b`: SQL-language functions are checked
 * against what they call when they are created). A function whose arguments or result change gets
 * a `drop function` in a migration, so that the file creates it anew.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));

/** Where knex finds the migrations, for `migrate.latest()` and `migrate.rollback()`. */
export const MIGRATIONS = {
  directory: path.join(here, '..', 'migrations'),
  loadExtensions: ['.ts'],
};

/** The folder of the SQL function files. */
export const FUNCTIONS_DIRECTORY = path.join(here, '..', 'functions');

/** One function file: its name (without `.sql`), what it requires, and its SQL. */
export interface FunctionFile {
  name: string;
  requires: string[];
  sql: string;
}

/** The `-- requires:` header of a function file, continued on the comment lines that follow it. */
const REQUIRES = /^-- requires:((?:.*)(?:\n--\s{2,}.*)*)/m;

/** Every function file, in an order in which each comes after what it requires. */
export function functionFiles(directory = FUNCTIONS_DIRECTORY): FunctionFile[] {
  const files = new Map<string, FunctionFile>();
  for (const entry of readdirSync(directory)
    .filter((f) => f.endsWith('.sql'))
    .sort()) {
    const sql = readFileSync(path.join(directory, entry), 'utf8');
    const listed = REQUIRES.exec(sql)?.[1] ?? '';
    const requires = listed
      .replace(/\n--/g, ' ')
      .split(/[\s,]+/)
      .filter(Boolean);
    files.set(entry.slice(0, -'.sql'.length), { name: entry.slice(0, -'.sql'.length), requires, sql });
  }
  const ordered: FunctionFile[] = [];
  const state = new Map<string, 'visiting' | 'done'>();
  const visit = (name: string, from: string[]) => {
    const file = files.get(name);
    if (!file) throw new Error(`db/functions: ${from.at(-1)}.sql requires ${name}, which has no file`);
    if (state.get(name) === 'done') return;
    if (state.get(name) === 'visiting')
      throw new Error(`db/functions: ${[...from, name].join(' → ')} is a cycle`);
    state.set(name, 'visiting');
    for (const required of file.requires) visit(required, [...from, name]);
    state.set(name, 'done');
    ordered.push(file);
  };
  for (const name of files.keys()) visit(name, []);
  return ordered;
}
