/**
 * Recurring series through the API: preview and create agree, reject and skip, every check in the
 * contract's order, the series window, confirm and release through the group, "this and following"
 * cancel and refund, events and bookings naming the series, and keys shared with every write.
 */
import test from 'ava';
import { randomUUID } from 'node:crypto';
import * as grants from '../../db/queries/venue-grants.ts';
import * as venues from '../../db/queries/venues.ts';
import { confirm, hold, makeBookingWorld } from '../helpers/booking.ts';
import { useTestDatabase } from '../helpers/database.ts';
import { makePartner } from '../helpers/factories.ts';
import { confirmGroup, createGroup, releaseGroup } from '../helpers/hold-groups.ts';
import { call, useTestServer } from '../helpers/http.ts';
import { assertDocumented } from '../helpers/openapi.ts';
import { changeSeries, createSeries, previewSeries, readSeries, weeksFrom } from '../helpers/series.ts';
import { join } from '../helpers/waitlist.ts';

const database = useTestDatabase(test);
const server = useTestServer(test, database);

const PREVIEW = 'POST /bookings/series/preview';
const CREATE = 'POST /bookings/series';
const READ = 'GET /bookings/series/{seriesId}';
const CANCEL = 'POST /bookings/series/{seriesId}/cancel';

/** A court at a venue in Asia/Kolkata (no daylight saving): 19:00 there is 13:30Z. */
async function world(venue: Parameters<typeof makeBookingWorld>[1] = {}) {
  const w = await makeBookingWorld(database().db, { maxAdvanceDays: 60, ...venue });
  const dates = await weeksFrom(database().db, w.venueId, 2, [0, 1, 2, 3, 4, 5]);
  const pattern = {
    venue_id: w.venueId,
    resource_id: w.court,
    first_date: dates[0],
    start_time: '19:00',
    slot_duration_minutes: 60,
    count: 6,
  };
  const at = (date: string) => new Date(`${date}T13:30:00.000Z`);
  return { w, dates, pattern, at };
}

test('preview and create agree: the same occurrences, instants, reasons and prices; reject refuses, skip holds the rest', async (t) => {
  const { w, dates, pattern, at } = await world();
  const rival = await makePartner(database().db, { rateLimit: 100_000 });
  await grants.grant(database().db, rival.partnerId, w.venueId);
  const taken = await hold(server(), rival.apiKey, {
    venue_id: w.venueId,
    resource_id: w.court,
    slot_start: at(dates[3]!),
  });
  t.is(taken.status, 201, taken.text);
  const body = { ...pattern, exclude_dates: [dates[1]] };

  const preview = await previewSeries(server(), w.apiKey, {
    ...body,
    on_conflict: 'nonsense',
    idempotency_key: '',
  });
  t.is(preview.status, 200, preview.text);
  assertDocumented(t, PREVIEW, preview);
  t.like(preview.body, {
    venue_id: w.venueId,
    resource_id: w.court,
    timezone: 'Asia/Kolkata',
    price_rupees: 4 * 500,
  });
  t.deepEqual(
    preview.body.occurrences.map((o: Record<string, unknown>) => [
      o.occurrence_index,
      o.local_date,
      o.slot_start,
      o.utc_offset,
      o.status,
      o.reason,
      o.price_rupees,
    ]),
    dates.map((date, k) =>
      k === 1
        ? [1, date, null, null, 'EXCLUDED', null, null]
        : k === 3
          ? [3, date, at(date).toISOString(), '+05:30', 'UNAVAILABLE', 'TAKEN', null]
          : [k, date, at(date).toISOString(), '+05:30', 'AVAILABLE', null, 500],
    ),
  );
  t.is(
    await database().db('hold_groups').where({ partner_id: w.partnerId }).first(),
    undefined,
    'nothing held',
  );

  const key = randomUUID();
  const rejected = await createSeries(server(), w.apiKey, { ...body, idempotency_key: key });
  t.is(rejected.status, 409, rejected.text);
  t.is(rejected.body.error, 'SLOT_NOT_AVAILABLE');
  assertDocumented(t, CREATE, rejected);
  t.deepEqual(rejected.body.details, [
    {
      field: 'occurrences.3',
      in: 'body',
      message: rejected.body.details[0].message,
      reason: 'TAKEN',
      local_date: dates[3],
    },
  ]);
  t.is(
    await database().db('hold_groups').where({ partner_id: w.partnerId }).first(),
    undefined,
    'nothing held',
  );

  const created = await createSeries(server(), w.apiKey, {
    ...body,
    on_conflict: 'skip',
    idempotency_key: key,
  });
  t.is(created.status, 201, created.text);
  assertDocumented(t, CREATE, created);
  const series = created.body;
  t.like(series, {
    venue_id: w.venueId,
    resource_id: w.court,
    timezone: 'Asia/Kolkata',
    first_date: dates[0],
    start_time: '19:00',
    slot_duration_minutes: 60,
    count: 6,
    interval_weeks: 1,
    price_rupees: 2000,
  });
  t.deepEqual(
    series.occurrences.map((o: Record<string, unknown>) => [
      o.occurrence_index,
      o.local_date,
      o.slot_start,
      o.utc_offset,
      o.reason,
      o.price_rupees,
    ]),
    preview.body.occurrences.map((o: Record<string, unknown>) => [
      o.occurrence_index,
      o.local_date,
      o.slot_start,
      o.utc_offset,
      o.reason,
      o.price_rupees,
    ]),
    'the same occurrences as the preview',
  );
  t.deepEqual(
    series.occurrences.map((o: { status: string }) => o.status),
    ['HELD', 'EXCLUDED', 'HELD', 'SKIPPED', 'HELD', 'HELD'],
  );
  t.true(
    series.occurrences.every(
      (o: { hold_id: string | null; status: string }) => (o.hold_id !== null) === (o.status === 'HELD'),
    ),
  );

  // Its group holds the held occurrences in index order, naming the series.
  const group = await call(server(), 'GET', `/api/v1/bookings/hold-groups/${series.hold_group_id}`, {
    key: w.apiKey,
  });
  t.is(group.body.series_id, series.series_id);
  t.is(group.body.hold_expiry_at, series.hold_expiry_at);
  t.deepEqual(
    group.body.holds.map((h: { hold_id: string }) => h.hold_id),
    series.occurrences
      .filter((o: { hold_id: string | null }) => o.hold_id)
      .map((o: { hold_id: string }) => o.hold_id),
  );
  const events = await database()
    .db('events')
    .where({ event_type: 'hold_created' })
    .whereIn(
      'hold_id',
      group.body.holds.map((h: { hold_id: string }) => h.hold_id),
    )
    .orderBy('seq');
  t.deepEqual(
    events.map((e) => [e.details.series_id, e.details.series_occurrence_index, e.details.hold_group_id]),
    [0, 2, 4, 5].map((k) => [series.series_id, k, series.hold_group_id]),
  );

  const read = await readSeries(server(), w.apiKey, series.series_id);
  t.is(read.status, 200);
  assertDocumented(t, READ, read);
  t.deepEqual(read.body, series);
  // The same key and body replays; the preview's extra members changed nothing.
  const replay = await createSeries(server(), w.apiKey, {
    ...body,
    on_conflict: 'skip',
    idempotency_key: key,
  });
  t.is(replay.status, 201);
  t.deepEqual(replay.body, series);
});

test('validation: exclusions, min_occurrences, the pattern; then the venue (403), then the resource (400)', async (t) => {
  const { w, dates, pattern } = await world();
  const invalid = async (body: Record<string, unknown>, fields: string[], route = createSeries) => {
    const res = await route(server(), w.apiKey, { ...pattern, ...body });
    t.is(res.status, 400, `${fields.join()}: ${res.text}`);
    t.is(res.body.error, 'VALIDATION_ERROR');
    t.deepEqual(
      res.body.details.map((d: { field: string; in: string }) => `${d.in}:${d.field}`),
      fields.map((f) => `body:${f}`),
    );
    return res;
  };
  await invalid({ exclude_dates: [dates[2], '2030-01-01'] }, ['exclude_dates.1']);
  await invalid({ exclude_dates: [dates[2], dates[4], dates[2]] }, ['exclude_dates.2']);
  await invalid({ exclude_dates: dates }, ['exclude_dates']);
  await invalid({ exclude_dates: [dates[0], dates[1]], min_occurrences: 5 }, ['min_occurrences']);
  // An entry that names no occurrence excludes none: all six are left for min_occurrences.
  await invalid({ exclude_dates: ['2030-01-01'], min_occurrences: 6 }, ['exclude_dates.0']);
  await invalid({ exclude_dates: [dates[1], dates[1]], min_occurrences: 6 }, [
    'exclude_dates.1',
    'min_occurrences',
  ]);
  await invalid({ min_occurrences: 7, on_conflict: 'reject' }, ['min_occurrences']);
  // Exclusions that leave none, or a pattern too broken to tell, hold min_occurrences to `count`
  // alone; an entry that is no date excludes none, and the others are still judged.
  await invalid({ exclude_dates: dates, min_occurrences: 6 }, ['exclude_dates']);
  await invalid({ exclude_dates: dates, min_occurrences: 7 }, ['exclude_dates', 'min_occurrences']);
  await invalid({ exclude_dates: ['2027-02-30', dates[0], dates[0]], min_occurrences: 6 }, [
    'exclude_dates.0',
    'exclude_dates.2',
    'min_occurrences',
  ]);
  await invalid({ first_date: '2027-02-29', min_occurrences: 7 }, ['first_date', 'min_occurrences']);
  await invalid({ count: 1 }, ['count']);
  await invalid({ count: 27 }, ['count']);
  await invalid({ interval_weeks: 5 }, ['interval_weeks']);
  await invalid({ start_time: '24:00' }, ['start_time']);
  await invalid({ start_time: '7:00' }, ['start_time']);
  await invalid({ first_date: '2027-02-29' }, ['first_date']);
  await invalid({ first_date: '9999-12-01' }, ['first_date']);
  await invalid({ slot_duration_minutes: 10 }, ['slot_duration_minutes']);
  await invalid({ on_conflict: 'maybe' }, ['on_conflict']);
  await invalid({ exclude_dates: 'all' }, ['exclude_dates']);
  await invalid({ exclude_dates: ['2030-01-01'] }, ['exclude_dates.0'], previewSeries);
  await invalid({ idempotency_key: undefined }, ['idempotency_key']);

  const stranger = await makePartner(database().db);
  for (const route of [previewSeries, createSeries]) {
    const notGranted = await route(server(), stranger.apiKey, { ...pattern, resource_id: 'nonsense' });
    t.is(notGranted.status, 403, 'the venue before the resource');
    t.is(notGranted.body.error, 'VENUE_NOT_AUTHORIZED');
    const unknown = await route(server(), w.apiKey, { ...pattern, resource_id: randomUUID() });
    t.is(unknown.status, 400);
    t.deepEqual(
      unknown.body.details.map((d: { field: string; in: string }) => [d.field, d.in]),
      [['resource_id', 'body']],
    );
  }
});

test('the series window: occurrences beyond max_advance_days are refused until the operator widens it', async (t) => {
  const { w, pattern } = await world({ maxAdvanceDays: 21 });
  const body = { ...pattern, count: 5, interval_weeks: 2 };
  const before = await previewSeries(server(), w.apiKey, body);
  t.deepEqual(
    before.body.occurrences.map((o: { reason: string | null }) => o.reason),
    [null, null, 'BEYOND_BOOKING_WINDOW', 'BEYOND_BOOKING_WINDOW', 'BEYOND_BOOKING_WINDOW'],
  );
  const refused = await createSeries(server(), w.apiKey, body);
  t.is(refused.status, 400);
  t.is(refused.body.error, 'SLOT_NOT_AVAILABLE');
  t.deepEqual(
    refused.body.details.map((d: { field: string }) => d.field),
    ['occurrences.2', 'occurrences.3', 'occurrences.4'],
  );
  t.true(await venues.setSeriesWindow(database().db, w.venueId, 90));
  const after = await createSeries(server(), w.apiKey, body);
  t.is(after.status, 201, after.text);
  // Single holds keep max_advance_days.
  const single = await hold(server(), w.apiKey, {
    venue_id: w.venueId,
    resource_id: w.court,
    slot_start: after.body.occurrences[4].slot_start,
    slot_duration_minutes: 60,
  });
  t.is(single.status, 400);
  t.is(await venues.setSeriesWindow(database().db, randomUUID(), 5), false);
});

test('confirm and release through the group; bookings carry the series; "this and following" cancel and refund', async (t) => {
  const { db } = database();
  const { w, dates, pattern } = await world();
  const created = await createSeries(server(), w.apiKey, { ...pattern, exclude_dates: [dates[1]] });
  t.is(created.status, 201, created.text);
  const series = created.body;
  const confirmed = await confirmGroup(server(), w.apiKey, series.hold_group_id);
  t.is(confirmed.status, 201, confirmed.text);
  const read = await readSeries(server(), w.apiKey, series.series_id);
  t.deepEqual(
    read.body.occurrences.map((o: { status: string }) => o.status),
    ['BOOKED', 'EXCLUDED', 'BOOKED', 'BOOKED', 'BOOKED', 'BOOKED'],
  );
  const bookingIds = read.body.occurrences.map((o: { booking_id: string | null }) => o.booking_id);
  const detail = await call(server(), 'GET', `/api/v1/bookings/${bookingIds[2]}`, { key: w.apiKey });
  t.like(detail.body, { series_id: series.series_id, hold_group_id: series.hold_group_id });
  const listed = await call(server(), 'GET', `/api/v1/bookings?series_id=${series.series_id}`, {
    key: w.apiKey,
  });
  t.deepEqual(
    listed.body.bookings.map((b: { booking_id: string }) => b.booking_id).sort(),
    bookingIds.filter(Boolean).sort(),
  );
  const created2 = await db('events')
    .where({ event_type: 'booking_created', booking_id: bookingIds[4] })
    .first();
  t.like(created2.details, { series_id: series.series_id, series_occurrence_index: 4 });

  // A waiting customer for week 4, and occurrence 2 already started: cancel from 2.
  await join(server(), w.apiKey, { venue_id: w.venueId, resource_id: w.court, slot_date: dates[4]! });
  await db('bookings')
    .where({ id: bookingIds[2] })
    .update({ slot_start: db.raw("now() - interval '1 minute'") });
  const key = randomUUID();
  const cancelled = await changeSeries(server(), w.apiKey, series.series_id, 'cancel', {
    from_occurrence_index: 2,
    reason: 'league moved',
    idempotency_key: key,
  });
  t.is(cancelled.status, 200, cancelled.text);
  assertDocumented(t, CANCEL, cancelled);
  t.deepEqual(cancelled.body.changed, [3, 4, 5]);
  t.deepEqual(
    cancelled.body.occurrences.map((o: { status: string }) => o.status),
    ['BOOKED', 'EXCLUDED', 'BOOKED', 'CANCELLED', 'CANCELLED', 'CANCELLED'],
    'started and earlier occurrences untouched',
  );
  const cancelEvents = await db('events')
    .where({ event_type: 'booking_cancelled' })
    .whereIn('booking_id', bookingIds.filter(Boolean))
    .orderBy('seq');
  t.deepEqual(
    cancelEvents.map((e) => [e.booking_id, e.details.series_occurrence_index]),
    [3, 4, 5].map((k) => [bookingIds[k], k]),
  );
  // One promotion job for the three freed windows, naming each.
  const { rows: jobs } = await db.raw<{ rows: { data: { event_ids: string[] } }[] }>(
    "select data from pgboss.job where name = 'waitlist.promote' and data \\? 'event_ids' and data->'event_ids' @> ?::jsonb",
    [JSON.stringify(cancelEvents.map((e) => e.id))],
  );
  t.deepEqual(
    jobs.map((j) => j.data.event_ids),
    [cancelEvents.map((e) => e.id)],
  );
  const again = await changeSeries(server(), w.apiKey, series.series_id, 'cancel', {
    from_occurrence_index: 2,
    reason: 'league moved',
    idempotency_key: key,
  });
  t.is(again.status, 200);
  t.deepEqual(again.body, cancelled.body, 'a replay answers the original');
  const nothing = await changeSeries(server(), w.apiKey, series.series_id, 'cancel', {
    from_occurrence_index: 3,
  });
  t.is(nothing.status, 409);
  t.is(nothing.body.error, 'INVALID_HOLD_STATE');

  const refunded = await changeSeries(server(), w.apiKey, series.series_id, 'refund', {
    from_occurrence_index: 4,
  });
  t.is(refunded.status, 200, refunded.text);
  t.deepEqual(refunded.body.changed, [4, 5]);
  t.deepEqual(
    refunded.body.occurrences.map((o: { status: string }) => o.status),
    ['BOOKED', 'EXCLUDED', 'BOOKED', 'CANCELLED', 'REFUNDED', 'REFUNDED'],
  );
  const tooFar = await changeSeries(server(), w.apiKey, series.series_id, 'refund', {
    from_occurrence_index: 6,
    idempotency_key: key,
  });
  t.is(tooFar.status, 400, 'the index is checked before the key');
  t.deepEqual(
    tooFar.body.details.map((d: { field: string }) => d.field),
    ['from_occurrence_index'],
  );
  const mismatch = await changeSeries(server(), w.apiKey, series.series_id, 'refund', {
    from_occurrence_index: 2,
    idempotency_key: key,
  });
  t.is(mismatch.status, 409);
  t.is(mismatch.body.error, 'IDEMPOTENCY_KEY_MISMATCH');
  // One occurrence alone: the booking routes.
  const single = await call(server(), 'POST', `/api/v1/bookings/${bookingIds[0]}/cancel`, {
    key: w.apiKey,
    body: { idempotency_key: randomUUID() },
  });
  t.is(single.status, 200);
});

test('a series not confirmed has nothing to cancel; a released one reads CANCELLED; an expired one EXPIRED', async (t) => {
  const { db } = database();
  const { w, pattern } = await world();
  const first = (await createSeries(server(), w.apiKey, { ...pattern, count: 2 })).body;
  const cancel = await changeSeries(server(), w.apiKey, first.series_id, 'cancel');
  t.is(cancel.status, 409);
  t.is(cancel.body.error, 'INVALID_HOLD_STATE');
  t.is((await releaseGroup(server(), w.apiKey, first.hold_group_id)).status, 200);
  t.deepEqual(
    (await readSeries(server(), w.apiKey, first.series_id)).body.occurrences.map(
      (o: { status: string }) => o.status,
    ),
    ['CANCELLED', 'CANCELLED'],
  );
  const second = (await createSeries(server(), w.apiKey, { ...pattern, count: 2, start_time: '20:00' })).body;
  await db('hold_groups')
    .where({ id: second.hold_group_id })
    .update({ hold_expiry_at: db.raw("now() - interval '1 second'") });
  const expired = await readSeries(server(), w.apiKey, second.series_id);
  t.deepEqual(
    expired.body.occurrences.map((o: { status: string }) => o.status),
    ['EXPIRED', 'EXPIRED'],
  );
  // Its holds are a group's: the v1 routes answer HOLD_IN_GROUP.
  const v1 = await confirm(server(), w.apiKey, { hold_id: second.occurrences[0].hold_id });
  t.is(v1.body.error, 'HOLD_IN_GROUP');
  t.is(v1.body.hold_group_id, second.hold_group_id);
});

test('access: a bad id 400 in path, unknown 404 SERIES_NOT_FOUND, another partner 403, then the venue grant', async (t) => {
  const { w, pattern } = await world();
  const series = (await createSeries(server(), w.apiKey, { ...pattern, count: 2 })).body;
  const stranger = await makePartner(database().db);
  const routes = [
    (id: string, key: string) => readSeries(server(), key, id),
    (id: string, key: string) => changeSeries(server(), key, id, 'cancel'),
    (id: string, key: string) => changeSeries(server(), key, id, 'refund'),
  ];
  // The body before the id: a bad body is answered alone, whatever the id.
  for (const action of ['cancel', 'refund']) {
    const both = await call(server(), 'POST', `/api/v1/bookings/series/not-a-uuid/${action}`, {
      key: w.apiKey,
      body: {},
    });
    t.is(both.status, 400);
    t.deepEqual(
      both.body.details.map((d: { field: string; in: string }) => [d.field, d.in]),
      [['idempotency_key', 'body']],
    );
  }
  for (const route of routes) {
    const bad = await route('not-a-uuid', w.apiKey);
    t.is(bad.status, 400);
    t.deepEqual(
      bad.body.details.map((d: { field: string; in: string }) => [d.field, d.in]),
      [['seriesId', 'path']],
    );
    const unknown = await route(randomUUID(), w.apiKey);
    t.is(unknown.status, 404);
    t.is(unknown.body.error, 'SERIES_NOT_FOUND');
    t.is((await route(series.series_id, stranger.apiKey)).status, 403);
  }
  await grants.revoke(database().db, w.partnerId, w.venueId);
  t.is((await readSeries(server(), w.apiKey, series.series_id)).status, 200);
  const cancel = await changeSeries(server(), w.apiKey, series.series_id, 'cancel', {
    from_occurrence_index: 9,
  });
  t.is(cancel.status, 403, 'the venue grant before the index');
  t.is(cancel.body.error, 'VENUE_NOT_AUTHORIZED');
});

test('keys are shared with every write: a series key on a group or a hold, and back, is 409', async (t) => {
  const { w, pattern, dates, at } = await world();
  const key = randomUUID();
  t.is((await createSeries(server(), w.apiKey, { ...pattern, count: 2, idempotency_key: key })).status, 201);
  const mismatch = (res: { status: number; body: { error: string } }) => {
    t.is(res.status, 409);
    t.is(res.body.error, 'IDEMPOTENCY_KEY_MISMATCH');
  };
  mismatch(await createSeries(server(), w.apiKey, { ...pattern, count: 3, idempotency_key: key }));
  // Bodies equal as JSON, not as what they come to: a default written out is another body.
  mismatch(
    await createSeries(server(), w.apiKey, { ...pattern, count: 2, interval_weeks: 1, idempotency_key: key }),
  );
  // Ignored members are ignored here too, however deep; member order aside, it replays.
  const deep = JSON.parse('['.repeat(1_000) + ']'.repeat(1_000)) as unknown;
  const { venue_id, ...rest } = pattern;
  const replay = await createSeries(server(), w.apiKey, {
    idempotency_key: key,
    ...rest,
    count: 2,
    venue_id,
    partner_id: randomUUID(),
    note: deep,
  });
  t.is(replay.status, 201, replay.text);
  mismatch(
    await createGroup(server(), w.apiKey, {
      venue_id: w.venueId,
      items: [{ resource_id: w.court, slot_start: at(dates[5]!).toISOString(), slot_duration_minutes: 60 }],
      idempotency_key: key,
    }),
  );
  mismatch(
    await hold(server(), w.apiKey, {
      venue_id: w.venueId,
      resource_id: w.court,
      slot_start: at(dates[5]!),
      idempotency_key: key,
    }),
  );
  const groupKey = randomUUID();
  t.is(
    (
      await createGroup(server(), w.apiKey, {
        venue_id: w.venueId,
        items: [{ resource_id: w.court, slot_start: at(dates[5]!).toISOString(), slot_duration_minutes: 60 }],
        idempotency_key: groupKey,
      })
    ).status,
    201,
  );
  mismatch(
    await createSeries(server(), w.apiKey, {
      ...pattern,
      start_time: '20:00',
      count: 2,
      idempotency_key: groupKey,
    }),
  );
});
