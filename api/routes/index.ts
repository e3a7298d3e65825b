/** Every route of the API, in one list: `api/app.ts` serves them, `api/openapi.ts` documents them. */
import type { Route } from '../route.ts';
import { availabilityChangeRoutes } from './availability-changes.ts';
import { availabilityRoutes } from './availability.ts';
import { bookingRoutes } from './bookings.ts';
import { contractRoutes } from './contract.ts';
import { docsRoutes } from './docs.ts';
import { eventRoutes } from './events.ts';
import { healthRoutes } from './health.ts';
import { holdGroupRoutes } from './hold-groups.ts';
import { holdRoutes } from './holds.ts';
import { packageRoutes } from './packages.ts';
import { seriesRoutes } from './series.ts';
import { venueRoutes } from './venues.ts';
import { waitlistRoutes } from './waitlist.ts';
import { webhookRoutes } from './webhooks.ts';

export const routes: readonly Route[] = [
  ...healthRoutes,
  ...contractRoutes(() => routes),
  ...docsRoutes,
  ...venueRoutes,
  ...availabilityRoutes,
  ...availabilityChangeRoutes,
  ...holdRoutes,
  ...holdGroupRoutes,
  ...seriesRoutes,
  ...bookingRoutes,
  ...packageRoutes,
  ...waitlistRoutes,
  ...webhookRoutes,
  ...eventRoutes,
];
