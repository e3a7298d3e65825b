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

/**
 * Locks a partner's row until the transaction ends, so that the commands that change its keys run
 * one after another; false when the partner does not exist.
 */
export async function lock(db: Knex, partnerId: string): Promise<boolean> {
  return Boolean(await db('partners').where({ id: partnerId }).forUpdate().first('id'));
}

/** Whether there is no partner at all (a fresh database, which `npm start` seeds). */
export async function noneExist(db: Knex): Promise<boolean> {
  return !(await db('partners').first('id'));
}

/** A partner as the operator CLI lists it. */
export interface PartnerListing {
  partner_id: string;
  name: string;
  rate_limit: number;
  created_at: Date;
  /** Keys that authenticate now (not revoked, not past their expiry). */
  active_keys: number;
  /** The venues granted to it. */
  venue_ids: string[];
}

/** Every partner, oldest first, with its working keys and granted venues. */
export async function listWithKeys(db: Knex): Promise<PartnerListing[]> {
  const { rows } = await db.raw<{ rows: PartnerListing[] }>(
    `select p.id as partner_id, p.name, p.rate_limit, p.created_at,
            (select count(*)::int from api_keys k
              where k.partner_id = p.id and api_key_is_live(k)) as active_keys,
            array(select g.venue_id from venue_grants g where g.partner_id = p.id order by g.venue_id) as venue_ids
       from partners p
      order by p.created_at, p.id`,
  );
  return rows;
}
