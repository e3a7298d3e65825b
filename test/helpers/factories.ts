/**
 * Factories: each makes one row with sensible defaults, takes overrides, and creates missing
 * parents, so a test states only what it is about.
 */
import { randomBytes } from 'node:crypto';
import { issueKey } from '../../db/cli/partner-commands.ts';
import type { Knex } from '../../db/postgres/knex.ts';
import * as packages from '../../db/queries/packages.ts';
import * as partners from '../../db/queries/partners.ts';
import * as resources from '../../db/queries/resources.ts';
import * as grants from '../../db/queries/venue-grants.ts';
import * as venues from '../../db/queries/venues.ts';

const suffix = () => randomBytes(3).toString('hex');

/** A partner with a live key. */
export async function makePartner(
  db: Knex,
  overrides: { name?: string; rateLimit?: number } = {},
): Promise<{ partnerId: string; apiKey: string }> {
  const partnerId = await partners.insert(db, {
    name: overrides.name ?? `Partner ${suffix()}`,
    rateLimit: overrides.rateLimit ?? 1000,
  });
  return { partnerId, apiKey: await issueKey(db, partnerId) };
}

/** A venue, granted to `grantTo` partners, in `status`. */
export async function makeVenue(
  db: Knex,
  overrides: Partial<venues.NewVenue> & { status?: venues.VenueStatus; grantTo?: string[] } = {},
): Promise<string> {
  const venueId = await venues.insert(db, {
    name: overrides.name ?? `Venue ${suffix()}`,
    address: overrides.address ?? '1 Test Road',
    city: overrides.city ?? 'Pune',
    timezone: overrides.timezone ?? 'Asia/Kolkata',
    holdSeconds: overrides.holdSeconds ?? 900,
    minLeadMinutes: overrides.minLeadMinutes ?? 0,
    maxAdvanceDays: overrides.maxAdvanceDays ?? 21,
  });
  if (overrides.status && overrides.status !== 'active')
    await venues.setStatus(db, venueId, overrides.status);
  for (const partnerId of overrides.grantTo ?? []) await grants.grant(db, partnerId, venueId);
  return venueId;
}

/** A resource of `venueId` (a new venue when absent); `parts` makes it convertible. */
export async function makeResource(
  db: Knex,
  overrides: Partial<resources.NewResource> = {},
): Promise<string> {
  return db.transaction(async (trx) =>
    resources.insert(trx, {
      venueId: overrides.venueId ?? (await makeVenue(trx)),
      resourceType: overrides.resourceType ?? 'court',
      sportCategory: overrides.sportCategory ?? 'badminton',
      durationMinutes: overrides.durationMinutes ?? 60,
      priceRupees: overrides.priceRupees ?? 500,
      opensAt: overrides.opensAt ?? '06:00',
      closesAt: overrides.closesAt ?? '22:00',
      closedOn: overrides.closedOn ?? [],
      parts: overrides.parts ?? [],
    }),
  );
}

/** A catalogue package of `venueId`. */
export function makePackage(
  db: Knex,
  overrides: Partial<packages.NewPackage> & { venueId: string },
): Promise<string> {
  return packages.insert(db, {
    name: overrides.name ?? `Ten games ${suffix()}`,
    credits: overrides.credits ?? 10,
    priceRupees: overrides.priceRupees ?? 4500,
    validDays: overrides.validDays ?? 90,
    venueId: overrides.venueId,
  });
}
