/** Changing part of a database function in a migration, from the definition in force. */
import type { Knex } from 'knex';

/**
 * Re-creates function `fn` (a regprocedure, e.g. `venue_slots(uuid,date,uuid,timestamptz,timestamptz)`)
 * with the text `from` replaced by `to`, reading the definition the database holds: such functions
 * are dozens of lines of which a few change, and the catalog's text is the exact one in force,
 * where a copy in the migration could drift from it. Refuses unless `from` occurs exactly once.
 */
export async function replaceInFunction(knex: Knex, fn: string, from: string, to: string): Promise<void> {
  const { rows } = await knex.raw<{ rows: { def: string }[] }>(
    'select pg_get_functiondef(?::regprocedure) as def',
    [fn],
  );
  const def = rows[0]!.def;
  if (def.split(from).length !== 2) throw new Error(`${fn} is not the definition this migration expects`);
  await knex.raw(def.replace(from, to));
}
