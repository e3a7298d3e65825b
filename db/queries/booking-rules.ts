/** Queries on the operator-set booking rules: price rules, blackouts and memberships. */
import { insertReturningId, type Knex } from '../postgres/knex.ts';

/** A price for slots of a resource on some days, hours or one date. */
export interface NewPriceRule {
  resourceId: string;
  priceRupees: number;
  days: number[] | null;
  fromTime: string | null;
  toTime: string | null;
  onDate: string | null;
}

export function insertPriceRule(db: Knex, rule: NewPriceRule): Promise<string> {
  return insertReturningId(db, 'price_rules', {
    resource_id: rule.resourceId,
    price_rupees: rule.priceRupees,
    days: rule.days,
    from_time: rule.fromTime,
    to_time: rule.toTime,
    on_date: rule.onDate,
  });
}

/** A window in which the venue, or the units of one resource, cannot be booked. */
export interface NewBlackout {
  venueId: string;
  resourceId: string | null;
  unitIds: string[] | null;
  from: Date;
  to: Date;
  reason: string | null;
}

export function insertBlackout(db: Knex, blackout: NewBlackout): Promise<string> {
  return insertReturningId(db, 'blackouts', {
    venue_id: blackout.venueId,
    resource_id: blackout.resourceId,
    unit_ids: blackout.unitIds,
    during: db.raw('tstzrange(?, ?)', [blackout.from, blackout.to]),
    reason: blackout.reason,
  });
}

/** A customer's discount at a venue. */
export interface NewMembership {
  venueId: string;
  customerPhone: string;
  discountPercent: number;
  expiresAt: Date | null;
}

export function insertMembership(db: Knex, membership: NewMembership): Promise<string> {
  return insertReturningId(db, 'memberships', {
    venue_id: membership.venueId,
    customer_phone: membership.customerPhone,
    discount_percent: membership.discountPercent,
    expires_at: membership.expiresAt,
  });
}
