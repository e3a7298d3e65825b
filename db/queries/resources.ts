/** Queries on `resources` and `resource_parts`. */
import { insertReturningId, type Knex } from '../postgres/knex.ts';

/** A row of `resources`; `opens_at`/`closes_at` are PostgreSQL `time` text (HH:MM:SS). */
export interface ResourceRow {
  id: string;
  venue_id: string;
  resource_type: string;
  sport_category: string;
  duration_minutes: number;
  price_rupees: number;
  opens_at: string;
  closes_at: string;
  /** ISO weekdays, 1 = Monday … 7 = Sunday. */
  closed_on: number[];
  created_at: Date;
}

/** The operator-set fields of a new resource; `parts` makes it convertible. */
export interface NewResource {
  venueId: string;
  resourceType: string;
  sportCategory: string;
  durationMinutes: number;
  priceRupees: number;
  opensAt: string;
  closesAt: string;
  closedOn: number[];
  parts: string[];
}

/** Creates a resource with its parts (call inside a transaction) and returns its id. */
export async function insert(trx: Knex, resource: NewResource): Promise<string> {
  const id = await insertReturningId(trx, 'resources', {
    venue_id: resource.venueId,
    resource_type: resource.resourceType,
    sport_category: resource.sportCategory,
    duration_minutes: resource.durationMinutes,
    price_rupees: resource.priceRupees,
    opens_at: resource.opensAt,
    closes_at: resource.closesAt,
    closed_on: resource.closedOn,
  });
  if (resource.parts.length) {
    await trx('resource_parts').insert(
      resource.parts.map((partId) => ({ resource_id: id, part_id: partId })),
    );
  }
  return id;
}

/** The resources of a venue in creation order. */
export function listByVenue(db: Knex, venueId: string): Promise<ResourceRow[]> {
  return db<ResourceRow>('resources').where({ venue_id: venueId }).orderBy(['created_at', 'id']);
}

/** Of `ids`, those that are resources of `venueId` and not convertible themselves. */
export async function findPlainOfVenue(db: Knex, venueId: string, ids: string[]): Promise<string[]> {
  const rows = (await db('resources as r')
    .select('r.id')
    .where('r.venue_id', venueId)
    .whereIn('r.id', ids)
    .whereNotExists(db('resource_parts as p').whereRaw('p.resource_id = r.id'))) as { id: string }[];
  return rows.map((r) => r.id);
}

/** The physical units a resource occupies: its parts when convertible, else itself. */
export async function unitsOf(db: Knex, resourceId: string): Promise<string[]> {
  const { rows } = await db.raw<{ rows: { units: string[] }[] }>('select resource_units(?) as units', [
    resourceId,
  ]);
  return rows[0]!.units;
}

/** A resource of a venue, or undefined (also for ids that are not uuids). */
export async function findOfVenue(
  db: Knex,
  venueId: string,
  resourceId: string,
): Promise<ResourceRow | undefined> {
  if (!isUuid(resourceId)) return undefined;
  return db<ResourceRow>('resources').where({ id: resourceId, venue_id: venueId }).first();
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Whether an opaque resource id can be a resource's (a uuid): anything else names none. */
export function isUuid(id: string): boolean {
  return UUID.test(id);
}
