import { z } from 'zod';
import { Phone } from '../../db/rules/phone.ts';
import {
  DateOnly,
  DateOnlyBeside,
  DateOnlyOutput,
  DateTime,
  IdempotencyKey,
  IgnoredPartnerId,
  opaqueText,
  Uuid,
  freeText,
} from './shared.ts';
import { ITEM_REASONS } from '../errors.ts';

/** The most occurrences a series has, excluded ones included. */
export const MAX_OCCURRENCES = 26;

/** The local dates of a pattern's occurrences: first_date + 7 × interval × k days, k < count. */
export function occurrenceDates(firstDate: string, count: number, intervalWeeks: number): string[] {
  const first = Date.parse(`${firstDate}T00:00:00Z`);
  return Array.from({ length: count }, (_, k) =>
    new Date(first + 7 * intervalWeeks * k * 86_400_000).toISOString().slice(0, 10),
  );
}

const patternShape = {
  venue_id: Uuid,
  resource_id: opaqueText({ min: 1, max: 100 }).meta({
    description: "One of the venue's resources (from discovery); checked after the venue grant.",
  }),
  first_date: DateOnlyBeside.meta({ description: 'The venue-local date of occurrence 0.' }),
  start_time: z
    .string()
    .regex(/^([01]\d|2[0-3]):[0-5]\d$/, 'must be HH:MM, 00:00 to 23:59')
    .meta({ description: 'The venue-local wall-clock start of every occurrence, HH:MM.', example: '19:00' }),
  slot_duration_minutes: z
    .number()
    .int()
    .min(15)
    .max(1440)
    .meta({ description: "A whole multiple of the resource's duration_minutes." }),
  count: z
    .number()
    .int()
    .min(2)
    .max(MAX_OCCURRENCES)
    .meta({ description: `2 to ${MAX_OCCURRENCES} occurrences, excluded ones included.` }),
  interval_weeks: z
    .number()
    .int()
    .min(1)
    .max(4)
    .default(1)
    .meta({ description: 'Weeks between occurrences.' }),
  exclude_dates: z.array(DateOnlyBeside).max(MAX_OCCURRENCES).default([]).meta({
    description:
      'Local dates of occurrences to leave out (each an occurrence’s local_date, once); not all of them.',
  }),
  customer_phone: Phone.optional().meta({
    description: 'When the customer has a membership at the venue, its discount applies to every occurrence.',
  }),
  partner_id: IgnoredPartnerId,
};

type Pattern = {
  first_date: string;
  count: number;
  interval_weeks: number;
  exclude_dates: string[];
};

/**
 * The checks a pattern's fields make together: every excluded date is an occurrence's and appears
 * once (a repeat names its later entry), not every occurrence is excluded, and the series ends by
 * 9999-12-31. Answers how many occurrences the exclusions leave: an entry that is no date is
 * refused by its own check and excludes nothing; undefined when the other fields are not sound
 * enough to tell.
 */
function checkPattern(pattern: Pattern, ctx: z.RefinementCtx): number | undefined {
  // zod runs this even when a field's own check failed: judge only a pattern whose fields are sound.
  const sound =
    DateOnly.safeParse(pattern.first_date).success &&
    patternShape.count.safeParse(pattern.count).success &&
    patternShape.interval_weeks.safeParse(pattern.interval_weeks).success &&
    Array.isArray(pattern.exclude_dates);
  if (!sound) return undefined;
  const last =
    Date.parse(`${pattern.first_date}T00:00:00Z`) +
    7 * pattern.interval_weeks * (pattern.count - 1) * 86_400_000;
  if (last > Date.parse('9999-12-31T00:00:00Z')) {
    ctx.addIssue({ code: 'custom', path: ['first_date'], message: 'the series would end after 9999-12-31' });
    return undefined;
  }
  const dates = occurrenceDates(pattern.first_date, pattern.count, pattern.interval_weeks);
  const seen = new Set<string>();
  pattern.exclude_dates.forEach((date, i) => {
    if (!DateOnly.safeParse(date).success) return; // named by its own check
    if (!dates.includes(date)) {
      ctx.addIssue({
        code: 'custom',
        path: ['exclude_dates', i],
        message: 'is not the date of an occurrence',
      });
    } else if (seen.has(date)) {
      ctx.addIssue({ code: 'custom', path: ['exclude_dates', i], message: 'repeats an earlier entry' });
    }
    seen.add(date);
  });
  const left = dates.filter((date) => !seen.has(date)).length;
  if (left === 0) {
    ctx.addIssue({ code: 'custom', path: ['exclude_dates'], message: 'must leave at least one occurrence' });
  }
  return left;
}

/** The body of POST /bookings/series/preview: a pattern (create's other fields are ignored). */
export const SeriesPatternBody = z.object(patternShape).superRefine((pattern, ctx) => {
  checkPattern(pattern, ctx);
});
export type SeriesPatternBody = z.infer<typeof SeriesPatternBody>;

export const CreateSeriesBody = z
  .object({
    ...patternShape,
    on_conflict: z
      .enum(['reject', 'skip'])
      .default('reject')
      .meta({
        description:
          '`reject`: any occurrence that cannot be held fails the request. `skip`: those occurrences are skipped, ' +
          'and the request fails only when fewer than min_occurrences would be held.',
      }),
    min_occurrences: z
      .number()
      .int()
      .min(1)
      .max(MAX_OCCURRENCES)
      .default(1)
      .meta({ description: 'At most count less the excluded occurrences; only `skip` uses it.' }),
    idempotency_key: IdempotencyKey,
  })
  .superRefine((body, ctx) => {
    // The occurrences excluded are the entries that name one: an entry that names none is refused
    // itself and excludes nothing. Exclusions that leave none are refused themselves (named there),
    // and so is a pattern too broken to tell: then min_occurrences is held to `count` alone.
    const counted = patternShape.count.safeParse(body.count).success ? body.count : undefined;
    const held = checkPattern(body, ctx) || counted;
    if (held !== undefined && Number.isInteger(body.min_occurrences) && body.min_occurrences > held) {
      ctx.addIssue({
        code: 'custom',
        path: ['min_occurrences'],
        message: `must be at most count less the excluded occurrences (${held})`,
      });
    }
  });
export type CreateSeriesBody = z.infer<typeof CreateSeriesBody>;

export const SeriesParams = z.object({ seriesId: Uuid });

export const SeriesChangeBody = z.object({
  idempotency_key: IdempotencyKey,
  reason: freeText({ max: 500 }).optional(),
  // Its upper bound is the series' count, checked after the venue grant (an index of count or
  // more is 400 then, naming it).
  from_occurrence_index: z
    .number()
    .int()
    .min(0)
    .default(0)
    .meta({ description: 'The first occurrence to change (0 to count − 1); later ones follow.' }),
  partner_id: IgnoredPartnerId,
});
export type SeriesChangeBody = z.infer<typeof SeriesChangeBody>;

const occurrenceFields = {
  occurrence_index: z.number().int(),
  local_date: DateOnlyOutput,
  slot_start: DateTime.nullable().meta({
    description: 'Null when excluded, or when its date has no window.',
  }),
  slot_end: DateTime.nullable(),
  utc_offset: z
    .string()
    .nullable()
    .meta({ description: "The venue zone's UTC offset at slot_start, ±HH:MM; null when slot_start is." }),
  reason: z
    .enum(ITEM_REASONS)
    .nullable()
    .meta({ description: 'Why it cannot be (or was not) held; null otherwise.' }),
  price_rupees: z
    .number()
    .int()
    .nullable()
    .meta({ description: 'What a hold of its window costs: for available occurrences and every held one.' }),
};

export const PreviewOccurrence = z
  .object({
    ...occurrenceFields,
    status: z.enum(['AVAILABLE', 'UNAVAILABLE', 'EXCLUDED']),
  })
  .meta({ id: 'SeriesPreviewOccurrence' });

export const SeriesPreviewResponse = z
  .object({
    venue_id: Uuid,
    resource_id: z.string(),
    timezone: z.string().meta({ description: "The venue's IANA time zone." }),
    price_rupees: z.number().int().meta({ description: 'The sum over AVAILABLE occurrences.' }),
    occurrences: z.array(PreviewOccurrence).meta({ description: 'One per index.' }),
  })
  .meta({ id: 'SeriesPreview' });
export type SeriesPreviewResponse = z.infer<typeof SeriesPreviewResponse>;

export const SeriesOccurrence = z
  .object({
    ...occurrenceFields,
    status: z.enum(['HELD', 'SKIPPED', 'EXCLUDED', 'EXPIRED', 'CANCELLED', 'BOOKED', 'REFUNDED']).meta({
      description:
        'HELD, SKIPPED or EXCLUDED at creation; then as its hold or booking goes: EXPIRED, CANCELLED (hold ' +
        'released or booking cancelled), BOOKED, REFUNDED.',
    }),
    hold_id: Uuid.nullable().meta({
      description: 'Its hold, kept whatever becomes of it; null when it had none.',
    }),
    booking_id: Uuid.nullable().meta({ description: 'Its booking once confirmed; null before.' }),
  })
  .meta({ id: 'SeriesOccurrence' });

export const SeriesResponse = z
  .object({
    series_id: Uuid,
    venue_id: Uuid,
    hold_group_id: Uuid.meta({ description: 'The hold group holding it: confirm and release through it.' }),
    resource_id: z.string(),
    timezone: z.string(),
    first_date: DateOnlyOutput,
    start_time: z.string().meta({ description: 'HH:MM, venue-local.' }),
    slot_duration_minutes: z.number().int(),
    count: z.number().int(),
    interval_weeks: z.number().int(),
    hold_expiry_at: DateTime.meta({ description: "The group's." }),
    price_rupees: z.number().int().meta({ description: 'The sum over the occurrences held at creation.' }),
    occurrences: z.array(SeriesOccurrence).meta({ description: 'All `count` of them, by index.' }),
  })
  .meta({ id: 'Series' });
export type SeriesResponse = z.infer<typeof SeriesResponse>;

export const SeriesChangeResponse = SeriesResponse.extend({
  changed: z
    .array(z.number().int())
    .meta({ description: 'The occurrence_index of every occurrence this request changed, ascending.' }),
}).meta({ id: 'SeriesChange' });
export type SeriesChangeResponse = z.infer<typeof SeriesChangeResponse>;
