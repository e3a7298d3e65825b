/** Waitlist: join, list and cancel entries for a sold-out resource and date. */
import { ValidationError, VenueNotAuthorizedError, WaitlistEntryNotFoundError } from '../errors.ts';
import { presentWaitlistEntry } from '../presenters/waitlist.ts';
import { defineRoute } from '../route.ts';
import { cancelWaitlistEntry, joinWaitlist, listWaitlist } from '../use-cases/manage-waitlist.ts';
import {
  JoinWaitlistBody,
  WaitlistEntryParams,
  WaitlistEntryResponse,
  WaitlistListResponse,
  WaitlistQuery,
} from '../schemas/waitlist.ts';

const tag = 'Waitlist';
const entryExample = {
  id: '8e6c4a2f-0d1b-4f3e-a5c7-9b8d6f4e2a10',
  venue_id: '3f1c2a9e-8d7b-4c55-9a0e-2b6f4d8e1a73',
  resource_id: '9b2d7c1e-4f3a-4e8b-b1c6-5d0a7e9f2c48',
  slot_date: '2026-11-29',
  slot_id: null,
  customer_phone: '+919812345678',
  customer_name: 'Asha Rao',
  partner_id: '0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d',
  status: 'waiting' as const,
  promoted_at: null,
  expires_at: '2026-11-29T10:00:00.000Z',
  created_at: '2026-11-22T10:00:00.000Z',
  updated_at: '2026-11-22T10:00:00.000Z',
};

export const waitlistRoutes = [
  defineRoute({
    method: 'POST',
    path: '/waitlist',
    operationId: 'joinWaitlist',
    summary: 'Join the waitlist for a resource and date',
    description:
      'Naturally idempotent, without a key: joining again for the same venue, resource, date and customer ' +
      'returns the same entry, set back to `waiting` with `expires_at` refreshed (its place in the queue is ' +
      'kept). When a window of that resource on that date is freed (a hold released or expired, a booking ' +
      'cancelled or refunded), the oldest waiting entry becomes `promoted` with the `slot_id` of the ' +
      "window's first slot, and a `waitlist_promoted` event is sent. A waiting entry past `expires_at` is " +
      "`expired`. 400 VALIDATION_ERROR when the resource is not one of the venue's or the date is past.",
    tag,
    auth: true,
    body: JoinWaitlistBody,
    bodyExample: {
      venue_id: '3f1c2a9e-8d7b-4c55-9a0e-2b6f4d8e1a73',
      resource_id: '9b2d7c1e-4f3a-4e8b-b1c6-5d0a7e9f2c48',
      slot_date: '2026-11-23',
      customer_phone: '9812345678',
      customer_name: 'Asha Rao',
      expires_in_days: 7,
    },
    responses: {
      201: {
        description: 'The entry (new, or the same entry again).',
        schema: WaitlistEntryResponse,
        example: { entry: entryExample },
      },
    },
    errors: [ValidationError, VenueNotAuthorizedError],
    async handler({ partnerId, body }, deps) {
      return {
        status: 201,
        body: { entry: presentWaitlistEntry(await joinWaitlist(deps, partnerId, body)) },
      };
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/waitlist',
    operationId: 'listWaitlist',
    summary: 'List your waitlist entries for a resource and date',
    description:
      'Only your own entries, oldest first, optionally of one status. Readable after a grant is withdrawn.',
    tag,
    auth: true,
    query: WaitlistQuery,
    responses: {
      200: {
        description: 'The entries (possibly none).',
        schema: WaitlistListResponse,
        example: { data: [entryExample] },
      },
    },
    async handler({ partnerId, query }, { db }) {
      const rows = await listWaitlist(db, partnerId, {
        venueId: query.venue_id,
        resourceId: query.resource_id,
        slotDate: query.slot_date,
        status: query.status,
      });
      return { status: 200, body: { data: rows.map(presentWaitlistEntry) } };
    },
  }),
  defineRoute({
    method: 'DELETE',
    path: '/waitlist/{entryId}',
    operationId: 'cancelWaitlistEntry',
    summary: 'Cancel a waitlist entry',
    description:
      'The entry is kept with status `cancelled` and is never promoted; cancelling it again answers 204 too. ' +
      "Another partner's entry is 404 like a missing one.",
    tag,
    auth: true,
    params: WaitlistEntryParams,
    responses: { 204: { description: 'Cancelled.' } },
    errors: [WaitlistEntryNotFoundError, VenueNotAuthorizedError],
    async handler({ partnerId, params }, { db }) {
      await cancelWaitlistEntry(db, partnerId, params.entryId);
      return { status: 204 };
    },
  }),
];
