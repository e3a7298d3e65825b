/**
 * demo:seed — a partner with a key, a venue granted to it with courts, half pitches that convert
 * into a full pitch, a court closed on Mondays, and a credit package: enough to try every endpoint.
 */
import { z } from 'zod';
import type { Knex } from '../postgres/knex.ts';
import * as packages from '../queries/packages.ts';
import * as partners from '../queries/partners.ts';
import * as resources from '../queries/resources.ts';
import * as grants from '../queries/venue-grants.ts';
import * as venues from '../queries/venues.ts';
import { defineCommand } from './command.ts';
import { DEFAULT_RATE_LIMIT, issueKey } from './partner-commands.ts';

/** What demo:seed prints. */
export interface DemoSeed {
  partner_id: string;
  api_key: string;
  venue_id: string;
  resource_ids: string[];
  package_id: string;
}

/** Seeds one demo set inside `trx`. */
export async function seedDemo(trx: Knex): Promise<DemoSeed> {
  const partnerId = await partners.insert(trx, { name: 'Demo Partner', rateLimit: DEFAULT_RATE_LIMIT });
  const apiKey = await issueKey(trx, partnerId);
  const venueId = await venues.insert(trx, {
    name: 'Demo Sports Arena',
    address: '1 Demo Road, Koregaon Park',
    city: 'Pune',
    timezone: 'Asia/Kolkata',
    holdSeconds: 900,
    minLeadMinutes: 0,
    maxAdvanceDays: 21,
  });
  const court = (closedOn: number[]) => ({
    venueId,
    resourceType: 'court',
    sportCategory: 'badminton',
    durationMinutes: 60,
    priceRupees: 500,
    opensAt: '06:00',
    closesAt: '22:00',
    closedOn,
    parts: [],
  });
  const pitch = (priceRupees: number, parts: string[]) => ({
    venueId,
    resourceType: parts.length ? 'full-pitch' : 'half-pitch',
    sportCategory: 'football',
    durationMinutes: 60,
    priceRupees,
    opensAt: '06:00',
    closesAt: '23:00',
    closedOn: [],
    parts,
  });
  const court1 = await resources.insert(trx, court([]));
  const court2 = await resources.insert(trx, court([1]));
  const halfA = await resources.insert(trx, pitch(1200, []));
  const halfB = await resources.insert(trx, pitch(1200, []));
  const full = await resources.insert(trx, pitch(2200, [halfA, halfB]));
  const packageId = await packages.insert(trx, {
    venueId,
    name: '10 badminton games',
    credits: 10,
    priceRupees: 4500,
    validDays: 90,
  });
  await grants.grant(trx, partnerId, venueId);
  return {
    partner_id: partnerId,
    api_key: apiKey,
    venue_id: venueId,
    resource_ids: [court1, court2, halfA, halfB, full],
    package_id: packageId,
  };
}

export const demoSeedCommand = defineCommand({
  name: 'demo:seed',
  usage: '',
  flags: z.strictObject({}),
  run: async (trx) => ({ ...(await seedDemo(trx)) }),
});
