/** Queries on `partners`. */
import { insertReturningId, type Knex } from '../postgres/knex.ts';

/** Creates a partner and returns its id. */
export async function insert(db: Knex, partner: { name: string; rateLimit: number }): Promise<string> {
  return insertReturningId(db, 'partners', { name: partner.name, rate_limit: partner.rateLimit });
}

/** Sets a partner's requests per 60 seconds; false when the partner does not exist. */
export async function setRateLimit(db: Knex, partnerId: string, limit: number): Promise<boolean> {
  return (await db('partners').where({ id: partnerId }).update({ rate_limit: limit })) > 0;
}

/** Whether a partner exists. */
export async function exists(db: Knex, partnerId: string): Promise<boolean> {
  return Boolean(await db('partners').where({ id: partnerId }).first('id'));
}

/** Whether there is no partner at all (a fresh database, which `npm start` seeds). */
export async function noneExist(db: Knex): Promise<boolean> {
  return !(await db('partners').first('id'));
}
