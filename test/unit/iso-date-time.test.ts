/**
 * parseIsoDateTime(): every ISO 8601 date-time with an offset (CONTRACT.md: "Inputs accept any ISO
 * 8601 date-time with an offset"), calendar, ordinal and week dates, extended and basic, down to
 * the hour with a fraction of the last part; and every form of a date or time that does not exist
 * refused. Expected instants are written out as RFC 3339 (week dates checked against Python's
 * date.fromisocalendar).
 */
import test from 'ava';
import { parseIsoDateTime } from '../../db/platform/input.ts';

const iso = (text: string) => parseIsoDateTime(text)?.toISOString();

test('calendar, ordinal and week dates, extended and basic, name the same day', (t) => {
  for (const text of [
    '2026-11-22T18:30:00Z',
    '20261122T183000Z',
    '2026-326T18:30Z',
    '2026326T1830Z',
    '2026-W47-7T18:30Z',
    '2026W477T1830Z',
    '2026-W47-7T20:00+01:30',
  ]) {
    t.is(iso(text), '2026-11-22T18:30:00.000Z', text);
  }
});

test('week dates cross years as ISO weeks do; 53 weeks only where the year has them', (t) => {
  t.is(iso('2026-W01-1T00:00Z'), '2025-12-29T00:00:00.000Z');
  t.is(iso('2020-W53-5T00:00Z'), '2021-01-01T00:00:00.000Z', '2020: a leap year starting on a Wednesday');
  t.is(iso('2026-W53-7T00:00Z'), '2027-01-03T00:00:00.000Z', '2026 starts on a Thursday');
  t.is(iso('2015-W53-1T00:00Z'), '2015-12-28T00:00:00.000Z');
  t.is(iso('1900-W01-1T00:00Z'), '1900-01-01T00:00:00.000Z');
  for (const text of [
    '2025-W53-1T00:00Z',
    '1900-W53-1T00:00Z',
    '2026-W00-1T00:00Z',
    '2026-W10-0T00:00Z',
    '2026-W10-8T00:00Z',
  ]) {
    t.is(parseIsoDateTime(text), undefined, text);
  }
});

test('ordinal days exist up to 365, or 366 in a leap year', (t) => {
  t.is(iso('2024-366T12:00Z'), '2024-12-31T12:00:00.000Z');
  t.is(iso('2026-001T00:00Z'), '2026-01-01T00:00:00.000Z');
  for (const text of ['2026-366T12:00Z', '2026-000T12:00Z', '2100-366T12:00Z']) {
    t.is(parseIsoDateTime(text), undefined, text);
  }
});

test('time down to the hour; a fraction belongs to the last part and rounds up to a millisecond', (t) => {
  t.is(iso('2026-12-21T01Z'), '2026-12-21T01:00:00.000Z');
  t.is(iso('20261221T01+0530'), '2026-12-20T19:30:00.000Z');
  t.is(iso('2026-12-21T01,5Z'), '2026-12-21T01:30:00.000Z', 'half an hour');
  t.is(iso('2026-12-21T01:30.25Z'), '2026-12-21T01:30:15.000Z', 'a quarter of a minute');
  t.is(iso('2026-12-21T01:30:15,5Z'), '2026-12-21T01:30:15.500Z');
  t.is(iso('2026-12-21T01:30:15.1234Z'), '2026-12-21T01:30:15.124Z', 'finer than a millisecond: up');
  t.is(iso('2026-12-21T01:30:00.0000001Z'), '2026-12-21T01:30:00.001Z', 'never the slot start itself');
  t.is(iso(`2026-12-21T01:30:00.${'0'.repeat(40)}1Z`), '2026-12-21T01:30:00.001Z', 'however far out');
  t.is(iso('2026-12-21T01:30:00.000000000Z'), '2026-12-21T01:30:00.000Z', 'zeros are exact');
  t.is(iso('2026-12-21T00,0000001Z'), '2026-12-21T00:00:00.001Z', 'a sliver of an hour');
});

test('refused: mixed forms, times and offsets that do not exist, and what is not ISO 8601', (t) => {
  for (const text of [
    '2026-11-22T1830Z',
    '20261122T18:30Z',
    '2026-11-22T18:30', // no offset
    '2026-11-22T24:00Z',
    '2026-11-22T18:60Z',
    '2026-11-22T18:30:60Z',
    '2026-11-22T18:30+24:00',
    '2026-11-22T18:30+05:60',
    '2027-02-29T00:00Z',
    '2026-11-22T18,5:30Z',
    '2026-11-22 18:30Z',
    '2026-1122T18:30Z',
    '2026-W477T18:30Z',
    '2026W47-7T18:30Z',
    '2026-11-22T18:30:00.Z',
    '+02026-11-22T18:30Z',
  ]) {
    t.is(parseIsoDateTime(text), undefined, text);
  }
});
