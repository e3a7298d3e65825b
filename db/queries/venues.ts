/** Queries on `venues`. */
import { insertReturningId, type Knex } from '../postgres/knex.ts';

/** The lifecycle of a venue: paused venues show but take no holds; archived ones are invisible. */
export const VENUE_STATUSES = ['active', 'paused', 'archived'] as const;
export type VenueStatus = (typeof VENUE_STATUSES)[number];

/** A row of `venues`. */
export interface VenueRow {
  id: string;
  name: string;
  address: string;
  city: string;
  timezone: string;
  hold_seconds: number;
  min_lead_minutes: number;
  max_advance_days: number;
  /** How far ahead series occurrences may lie; null: max_advance_days. */
  series_max_advance_days: number | null;
  status: VenueStatus;
  created_at: Date;
  updated_at: Date;
}

/** The operator-set fields of a new venue. */
export interface NewVenue {
  name: string;
  address: string;
  city: string;
  timezone: string;
  holdSeconds: number;
  minLeadMinutes: number;
  maxAdvanceDays: number;
}

/** Creates a venue and returns its id. */
export async function insert(db: Knex, venue: NewVenue): Promise<string> {
  return insertReturningId(db, 'venues', {
    name: venue.name,
    address: venue.address,
    city: venue.city,
    timezone: venue.timezone,
    hold_seconds: venue.holdSeconds,
    min_lead_minutes: venue.minLeadMinutes,
    max_advance_days: venue.maxAdvanceDays,
  });
}

/** Sets a venue's status; false when the venue does not exist. */
export async function setStatus(db: Knex, venueId: string, status: VenueStatus): Promise<boolean> {
  return (await db('venues').where({ id: venueId }).update({ status, updated_at: db.fn.now() })) > 0;
}

/**
 * Sets how far ahead series occurrences may lie at a venue (venue-local today + `days`); until set,
 * its max_advance_days. Whether the venue exists.
 */
export async function setSeriesWindow(db: Knex, venueId: string, days: number): Promise<boolean> {
  return (
    (await db('venues')
      .where({ id: venueId })
      .update({ series_max_advance_days: days, updated_at: db.fn.now() })) > 0
  );
}

/** Whether a venue exists (in any status). */
export async function exists(db: Knex, venueId: string): Promise<boolean> {
  return Boolean(await db('venues').where({ id: venueId }).first('id'));
}

/** Venues a partner may see: granted to it and not archived, by name. */
export function listVisible(db: Knex, partnerId: string): Promise<VenueRow[]> {
  return visible(db, partnerId).orderBy([{ column: 'v.name' }, { column: 'v.id' }]);
}

/** One venue if the partner may see it. */
export async function findVisible(
  db: Knex,
  partnerId: string,
  venueId: string,
): Promise<VenueRow | undefined> {
  return (await visible(db, partnerId).where('v.id', venueId).first()) as VenueRow | undefined;
}

/** `authorized_venues()` in SQL: granted to the partner and not archived (the one definition). */
function visible(db: Knex, partnerId: string) {
  return db<VenueRow>(db.raw('authorized_venues(?) as v', [partnerId])).select('v.*');
}

/** A venue as the operator CLI lists it. */
export interface VenueListing {
  venue_id: string;
  name: string;
  city: string;
  timezone: string;
  status: VenueStatus;
  created_at: Date;
  /** The partners it is granted to. */
  partner_ids: string[];
}

/** Every venue, oldest first, or those granted to `partnerId`; with the partners granted each. */
export async function listForOperator(db: Knex, partnerId?: string): Promise<VenueListing[]> {
  const { rows } = await db.raw<{ rows: VenueListing[] }>(
    `select v.id as venue_id, v.name, v.city, v.timezone, v.status, v.created_at,
            array(select g.partner_id from venue_grants g where g.venue_id = v.id order by g.partner_id) as partner_ids
       from venues v
      where ?::uuid is null or exists (select from venue_grants g where g.venue_id = v.id and g.partner_id = ?::uuid)
      order by v.created_at, v.id`,
    [partnerId ?? null, partnerId ?? null],
  );
  return rows;
}
