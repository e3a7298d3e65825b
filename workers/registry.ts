/** The one list of job handlers: every kind of job the worker runs, and who handles it. */
import { availabilityPrune } from './availability-prune.ts';
import { holdExpire } from './hold-expire.ts';
import { holdGroupExpire } from './hold-group-expire.ts';
import type { JobHandler } from './job-handler.ts';
import { retentionPrune } from './retention-prune.ts';
import { waitlistExpire } from './waitlist-expire.ts';
import { waitlistPromote } from './waitlist-promote.ts';

/** Every handler the worker registers. A new kind of job adds its handler here. */
export const handlers: readonly JobHandler[] = [
  holdExpire,
  holdGroupExpire,
  waitlistExpire,
  waitlistPromote,
  retentionPrune,
  availabilityPrune,
];
