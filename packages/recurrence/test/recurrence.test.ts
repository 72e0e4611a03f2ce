import { DateTime } from 'luxon';
import {
  DEFAULT_MAX_OCCURRENCES,
  type Frequency,
  type Recurrence,
  assertValidRecurrence,
  isFrequency,
  isValidTimeZone,
  latestOccurrenceAtOrBefore,
  nextOccurrence,
  occurrenceAt,
  occurrencesBetween,
} from '../src/recurrence';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

function rule(frequency: Frequency, timezone: string, startsAt: string): Recurrence {
  return { frequency, timezone, startsAt: new Date(startsAt) };
}

/** The occurrence rendered as local ISO time with offset in `zone`. */
function local(date: Date | null, zone: string): string | null {
  if (date === null) return null;
  return DateTime.fromJSDate(date, { zone }).toISO({ suppressMilliseconds: true });
}

function utc(date: Date | null): string | null {
  return date === null ? null : date.toISOString();
}

/** Occurrences k = from..to rendered in the rule's zone. */
function series(r: Recurrence, from: number, to: number): (string | null)[] {
  const out: (string | null)[] = [];
  for (let k = from; k <= to; k++) out.push(local(occurrenceAt(r, k), r.timezone));
  return out;
}

describe('isValidTimeZone', () => {
  it.each([
    'UTC',
    'Etc/UTC',
    'America/New_York',
    'Europe/London',
    'Australia/Sydney',
    'Asia/Kolkata',
    'Asia/Kathmandu',
    'Australia/Adelaide',
    'Etc/GMT+2',
  ])('accepts %s', (name) => {
    expect(isValidTimeZone(name)).toBe(true);
  });

  it.each([
    '+02:00',
    '-05:00',
    '+0200',
    '-0500',
    'UTC+2',
    'UTC-05:00',
    'UTC +2',
    'GMT+2',
    'GMT-0300',
    'Z',
    '',
    ' America/New_York',
    'America/New_York ',
    'Mars/Olympus_Mons',
    'America/Nowhere',
    'local',
  ])('rejects %j', (name) => {
    expect(isValidTimeZone(name)).toBe(false);
  });
});

describe('isFrequency and assertValidRecurrence', () => {
  it('knows the four frequencies', () => {
    expect(['once', 'daily', 'weekly', 'monthly'].every(isFrequency)).toBe(true);
    expect(isFrequency('hourly')).toBe(false);
    expect(isFrequency('')).toBe(false);
  });

  it('rejects an invalid zone, frequency or start', () => {
    expect(() => assertValidRecurrence(rule('daily', '+02:00', '2026-01-01T00:00:00Z'))).toThrow(RangeError);
    expect(() => assertValidRecurrence({ frequency: 'hourly' as Frequency, timezone: 'UTC', startsAt: new Date() })).toThrow(RangeError);
    expect(() => assertValidRecurrence({ frequency: 'daily', timezone: 'UTC', startsAt: new Date('not a date') })).toThrow(RangeError);
    expect(() => assertValidRecurrence(rule('daily', 'UTC', '2026-01-01T00:00:00Z'))).not.toThrow();
  });

  it('every public function validates its rule and instants', () => {
    const bad = rule('daily', 'UTC+2', '2026-01-01T00:00:00Z');
    const good = rule('daily', 'UTC', '2026-01-01T00:00:00Z');
    const t = new Date('2026-02-01T00:00:00Z');
    expect(() => occurrenceAt(bad, 1)).toThrow(RangeError);
    expect(() => nextOccurrence(bad, t)).toThrow(RangeError);
    expect(() => occurrencesBetween(bad, t, t)).toThrow(RangeError);
    expect(() => latestOccurrenceAtOrBefore(bad, t)).toThrow(RangeError);
    expect(() => nextOccurrence(good, new Date(NaN))).toThrow(RangeError);
    expect(() => occurrencesBetween(good, t, new Date(NaN))).toThrow(RangeError);
    expect(() => latestOccurrenceAtOrBefore(good, new Date(NaN))).toThrow(RangeError);
  });
});

describe('occurrenceAt: indices', () => {
  const r = rule('daily', 'UTC', '2026-01-01T09:00:00Z');

  it('k = 0 is starts_at itself', () => {
    expect(occurrenceAt(r, 0)).toEqual(r.startsAt);
    expect(occurrenceAt(r, 0)).not.toBe(r.startsAt);
  });

  it('a negative k has no occurrence', () => {
    expect(occurrenceAt(r, -1)).toBeNull();
  });

  it('a fractional k is rejected', () => {
    expect(() => occurrenceAt(r, 1.5)).toThrow(RangeError);
    expect(() => occurrenceAt(r, Number.NaN)).toThrow(RangeError);
  });

  it('an index beyond the representable range has no occurrence', () => {
    expect(occurrenceAt(r, 200_000_000)).toBeNull();
    expect(occurrenceAt(rule('monthly', 'UTC', '2026-01-01T09:00:00Z'), 4_000_000)).toBeNull();
  });
});

describe('once', () => {
  const r = rule('once', 'Europe/Paris', '2026-06-15T10:00:00+02:00');
  const at = new Date('2026-06-15T08:00:00Z');

  it('has exactly one occurrence, at starts_at', () => {
    expect(utc(occurrenceAt(r, 0))).toBe('2026-06-15T08:00:00.000Z');
    expect(occurrenceAt(r, 1)).toBeNull();
    expect(occurrenceAt(r, 2)).toBeNull();
  });

  it('nextOccurrence is starts_at while it is in the future, then null', () => {
    expect(nextOccurrence(r, new Date('2026-01-01T00:00:00Z'))).toEqual(at);
    expect(nextOccurrence(r, new Date(at.getTime() - 1))).toEqual(at);
    expect(nextOccurrence(r, at)).toBeNull();
    expect(nextOccurrence(r, at, { inclusive: true })).toEqual(at);
    expect(nextOccurrence(r, new Date(at.getTime() + 1), { inclusive: true })).toBeNull();
    expect(nextOccurrence(r, new Date('2030-01-01T00:00:00Z'))).toBeNull();
  });

  it('occurrencesBetween and latestOccurrenceAtOrBefore see the single run', () => {
    expect(occurrencesBetween(r, new Date('2026-01-01T00:00:00Z'), new Date('2027-01-01T00:00:00Z'))).toEqual([at]);
    expect(occurrencesBetween(r, at, new Date('2027-01-01T00:00:00Z'))).toEqual([]);
    expect(occurrencesBetween(r, new Date(at.getTime() - 1), at)).toEqual([at]);
    expect(latestOccurrenceAtOrBefore(r, new Date(at.getTime() - 1))).toBeNull();
    expect(latestOccurrenceAtOrBefore(r, at)).toEqual(at);
    expect(latestOccurrenceAtOrBefore(r, new Date('2030-01-01T00:00:00Z'))).toEqual(at);
  });
});

describe('UTC', () => {
  it('daily keeps the time of day and crosses month and year ends', () => {
    const r = rule('daily', 'UTC', '2026-12-30T23:59:30.250Z');
    expect([0, 1, 2, 3, 62].map((k) => utc(occurrenceAt(r, k)))).toEqual([
      '2026-12-30T23:59:30.250Z',
      '2026-12-31T23:59:30.250Z',
      '2027-01-01T23:59:30.250Z',
      '2027-01-02T23:59:30.250Z',
      '2027-03-02T23:59:30.250Z',
    ]);
    expect(utc(occurrenceAt(r, 365))).toBe('2027-12-30T23:59:30.250Z');
  });

  it('daily crosses 29 February in a leap year', () => {
    const r = rule('daily', 'Etc/UTC', '2028-02-28T06:00:00Z');
    expect(series(r, 0, 2)).toEqual(['2028-02-28T06:00:00+00:00', '2028-02-29T06:00:00+00:00', '2028-03-01T06:00:00+00:00']);
  });

  it('weekly keeps the weekday', () => {
    const r = rule('weekly', 'UTC', '2026-01-06T18:30:00Z'); // a Tuesday
    const occurrences = [0, 1, 2, 3, 4, 52, 104].map((k) => occurrenceAt(r, k)!);
    expect(occurrences.map((d) => d.getUTCDay())).toEqual([2, 2, 2, 2, 2, 2, 2]);
    expect(occurrences.map(utc)).toEqual([
      '2026-01-06T18:30:00.000Z',
      '2026-01-13T18:30:00.000Z',
      '2026-01-20T18:30:00.000Z',
      '2026-01-27T18:30:00.000Z',
      '2026-02-03T18:30:00.000Z',
      '2027-01-05T18:30:00.000Z',
      '2028-01-04T18:30:00.000Z',
    ]);
  });

  it('monthly keeps the day of month and crosses year ends', () => {
    const r = rule('monthly', 'UTC', '2026-11-15T12:00:00Z');
    expect([0, 1, 2, 3, 14, 120].map((k) => utc(occurrenceAt(r, k)))).toEqual([
      '2026-11-15T12:00:00.000Z',
      '2026-12-15T12:00:00.000Z',
      '2027-01-15T12:00:00.000Z',
      '2027-02-15T12:00:00.000Z',
      '2028-01-15T12:00:00.000Z',
      '2036-11-15T12:00:00.000Z',
    ]);
  });
});

describe('monthly anchored on the 29th, 30th and 31st', () => {
  it('the 31st clamps to the last day of shorter months and returns to the 31st', () => {
    const r = rule('monthly', 'UTC', '2027-08-31T10:00:00Z');
    expect(series(r, 0, 19)).toEqual([
      '2027-08-31T10:00:00Z',
      '2027-09-30T10:00:00Z',
      '2027-10-31T10:00:00Z',
      '2027-11-30T10:00:00Z',
      '2027-12-31T10:00:00Z',
      '2028-01-31T10:00:00Z',
      '2028-02-29T10:00:00Z', // leap February
      '2028-03-31T10:00:00Z',
      '2028-04-30T10:00:00Z',
      '2028-05-31T10:00:00Z',
      '2028-06-30T10:00:00Z',
      '2028-07-31T10:00:00Z',
      '2028-08-31T10:00:00Z',
      '2028-09-30T10:00:00Z',
      '2028-10-31T10:00:00Z',
      '2028-11-30T10:00:00Z',
      '2028-12-31T10:00:00Z',
      '2029-01-31T10:00:00Z',
      '2029-02-28T10:00:00Z', // non-leap February
      '2029-03-31T10:00:00Z',
    ]);
  });

  it('the 30th clamps only in February', () => {
    const r = rule('monthly', 'UTC', '2027-01-30T00:00:00Z');
    expect(series(r, 0, 3)).toEqual(['2027-01-30T00:00:00Z', '2027-02-28T00:00:00Z', '2027-03-30T00:00:00Z', '2027-04-30T00:00:00Z']);
    expect(series(r, 12, 14)).toEqual(['2028-01-30T00:00:00Z', '2028-02-29T00:00:00Z', '2028-03-30T00:00:00Z']);
  });

  it('the 29th clamps only in a non-leap February', () => {
    const r = rule('monthly', 'UTC', '2027-01-29T23:00:00Z');
    expect(series(r, 0, 2)).toEqual(['2027-01-29T23:00:00Z', '2027-02-28T23:00:00Z', '2027-03-29T23:00:00Z']);
    expect(series(r, 12, 14)).toEqual(['2028-01-29T23:00:00Z', '2028-02-29T23:00:00Z', '2028-03-29T23:00:00Z']);
    expect(series(r, 24, 26)).toEqual(['2029-01-29T23:00:00Z', '2029-02-28T23:00:00Z', '2029-03-29T23:00:00Z']);
  });

  it('anchored on 29 February it runs on the 29th wherever the month has one', () => {
    const r = rule('monthly', 'UTC', '2028-02-29T08:00:00Z');
    expect(series(r, 0, 2)).toEqual(['2028-02-29T08:00:00Z', '2028-03-29T08:00:00Z', '2028-04-29T08:00:00Z']);
    expect(local(occurrenceAt(r, 12), 'UTC')).toBe('2029-02-28T08:00:00Z');
    expect(local(occurrenceAt(r, 48), 'UTC')).toBe('2032-02-29T08:00:00Z');
  });

  it('uses the local date, not the UTC date, of the anchor', () => {
    // 00:15 in Kolkata on the 31st is still the 30th in UTC.
    const r = rule('monthly', 'Asia/Kolkata', '2026-01-31T00:15:00+05:30');
    expect(utc(r.startsAt)).toBe('2026-01-30T18:45:00.000Z');
    expect(series(r, 0, 3)).toEqual([
      '2026-01-31T00:15:00+05:30',
      '2026-02-28T00:15:00+05:30',
      '2026-03-31T00:15:00+05:30',
      '2026-04-30T00:15:00+05:30',
    ]);
    expect(utc(occurrenceAt(r, 1))).toBe('2026-02-27T18:45:00.000Z');
  });
});

describe('America/New_York (2026-03-08 spring forward, 2026-11-01 fall back)', () => {
  const NY = 'America/New_York';

  it('02:30 daily moves forward by the gap on 8 March only', () => {
    const r = rule('daily', NY, '2026-03-06T02:30:00-05:00');
    expect(series(r, 0, 4)).toEqual([
      '2026-03-06T02:30:00-05:00',
      '2026-03-07T02:30:00-05:00',
      '2026-03-08T03:30:00-04:00',
      '2026-03-09T02:30:00-04:00',
      '2026-03-10T02:30:00-04:00',
    ]);
    expect(utc(occurrenceAt(r, 2))).toBe('2026-03-08T07:30:00.000Z');
  });

  it('the gap edges: 02:00 becomes 03:00, 01:59 and 03:00 stay', () => {
    expect(local(occurrenceAt(rule('daily', NY, '2026-03-07T02:00:00-05:00'), 1), NY)).toBe('2026-03-08T03:00:00-04:00');
    expect(local(occurrenceAt(rule('daily', NY, '2026-03-07T01:59:00-05:00'), 1), NY)).toBe('2026-03-08T01:59:00-05:00');
    expect(local(occurrenceAt(rule('daily', NY, '2026-03-07T03:00:00-05:00'), 1), NY)).toBe('2026-03-08T03:00:00-04:00');
    // The gap-shifted 02:00 and the regular 03:00 are the same instant on that one day.
    expect(utc(occurrenceAt(rule('daily', NY, '2026-03-07T02:00:00-05:00'), 1))).toBe('2026-03-08T07:00:00.000Z');
  });

  it('01:30 daily takes the first (EDT) occurrence on 1 November', () => {
    const r = rule('daily', NY, '2026-10-30T01:30:00-04:00');
    expect(series(r, 0, 4)).toEqual([
      '2026-10-30T01:30:00-04:00',
      '2026-10-31T01:30:00-04:00',
      '2026-11-01T01:30:00-04:00',
      '2026-11-02T01:30:00-05:00',
      '2026-11-03T01:30:00-05:00',
    ]);
    expect(utc(occurrenceAt(r, 2))).toBe('2026-11-01T05:30:00.000Z');
  });

  it('the overlap edges: 01:00 is ambiguous (first taken), 02:00 exists once', () => {
    expect(utc(occurrenceAt(rule('daily', NY, '2026-10-31T01:00:00-04:00'), 1))).toBe('2026-11-01T05:00:00.000Z');
    expect(utc(occurrenceAt(rule('daily', NY, '2026-10-31T01:59:59.999-04:00'), 1))).toBe('2026-11-01T05:59:59.999Z');
    expect(utc(occurrenceAt(rule('daily', NY, '2026-10-31T02:00:00-04:00'), 1))).toBe('2026-11-01T07:00:00.000Z');
    expect(utc(occurrenceAt(rule('daily', NY, '2026-10-31T00:59:00-04:00'), 1))).toBe('2026-11-01T04:59:00.000Z');
  });

  it('01:30 on the spring-forward day and 02:30 on the fall-back day are ordinary', () => {
    expect(local(occurrenceAt(rule('daily', NY, '2026-03-07T01:30:00-05:00'), 1), NY)).toBe('2026-03-08T01:30:00-05:00');
    expect(local(occurrenceAt(rule('daily', NY, '2026-10-31T02:30:00-04:00'), 1), NY)).toBe('2026-11-01T02:30:00-05:00');
  });

  it('09:00 keeps its wall clock across both transitions while the UTC instant shifts by an hour', () => {
    const r = rule('daily', NY, '2026-03-07T09:00:00-05:00');
    expect([0, 1, 2].map((k) => utc(occurrenceAt(r, k)))).toEqual([
      '2026-03-07T14:00:00.000Z',
      '2026-03-08T13:00:00.000Z',
      '2026-03-09T13:00:00.000Z',
    ]);
    const fall = rule('daily', NY, '2026-10-31T09:00:00-04:00');
    expect([0, 1, 2].map((k) => utc(occurrenceAt(fall, k)))).toEqual([
      '2026-10-31T13:00:00.000Z',
      '2026-11-01T14:00:00.000Z',
      '2026-11-02T14:00:00.000Z',
    ]);
    expect(series(fall, 0, 2)).toEqual(['2026-10-31T09:00:00-04:00', '2026-11-01T09:00:00-05:00', '2026-11-02T09:00:00-05:00']);
  });

  it('consecutive daily runs are 23 hours apart over spring forward and 25 over fall back', () => {
    const spring = rule('daily', NY, '2026-03-07T09:00:00-05:00');
    expect(occurrenceAt(spring, 1)!.getTime() - occurrenceAt(spring, 0)!.getTime()).toBe(23 * HOUR);
    const fall = rule('daily', NY, '2026-10-31T09:00:00-04:00');
    expect(occurrenceAt(fall, 1)!.getTime() - occurrenceAt(fall, 0)!.getTime()).toBe(25 * HOUR);
    // In the gap: 02:30 EST -> 03:30 EDT is 24 h, 03:30 EDT -> 02:30 EDT is 23 h.
    const gap = rule('daily', NY, '2026-03-07T02:30:00-05:00');
    expect(occurrenceAt(gap, 1)!.getTime() - occurrenceAt(gap, 0)!.getTime()).toBe(24 * HOUR);
    expect(occurrenceAt(gap, 2)!.getTime() - occurrenceAt(gap, 1)!.getTime()).toBe(23 * HOUR);
  });

  it('weekly and monthly apply the same DST rules', () => {
    const weekly = rule('weekly', NY, '2026-03-01T02:30:00-05:00'); // Sundays
    expect(series(weekly, 0, 2)).toEqual(['2026-03-01T02:30:00-05:00', '2026-03-08T03:30:00-04:00', '2026-03-15T02:30:00-04:00']);
    const weeklyFall = rule('weekly', NY, '2026-10-25T01:30:00-04:00');
    expect(series(weeklyFall, 0, 2)).toEqual(['2026-10-25T01:30:00-04:00', '2026-11-01T01:30:00-04:00', '2026-11-08T01:30:00-05:00']);
    const monthly = rule('monthly', NY, '2026-02-08T02:30:00-05:00');
    expect(series(monthly, 0, 2)).toEqual(['2026-02-08T02:30:00-05:00', '2026-03-08T03:30:00-04:00', '2026-04-08T02:30:00-04:00']);
    const monthlyFall = rule('monthly', NY, '2026-10-01T01:30:00-04:00');
    expect(series(monthlyFall, 0, 2)).toEqual(['2026-10-01T01:30:00-04:00', '2026-11-01T01:30:00-04:00', '2026-12-01T01:30:00-05:00']);
  });

  it('an anchor given as the second 01:30 is kept as given, later days use 01:30 normally', () => {
    const r = rule('daily', NY, '2026-11-01T01:30:00-05:00');
    expect(utc(occurrenceAt(r, 0))).toBe('2026-11-01T06:30:00.000Z');
    expect(series(r, 0, 1)).toEqual(['2026-11-01T01:30:00-05:00', '2026-11-02T01:30:00-05:00']);
  });

  it('an anchor instant whose local reading is 03:30 anchors on 03:30', () => {
    // 02:30-05:00 on 8 March is the instant 07:30Z, which New York reads as 03:30 EDT.
    const r = rule('daily', NY, '2026-03-08T02:30:00-05:00');
    expect(series(r, 0, 1)).toEqual(['2026-03-08T03:30:00-04:00', '2026-03-09T03:30:00-04:00']);
  });

  it('a daily 09:00 schedule from March to November 2026 runs once per calendar day at 09:00', () => {
    const r = rule('daily', NY, '2026-03-01T09:00:00-05:00');
    const from = new Date('2026-03-01T00:00:00-05:00');
    const to = new Date('2026-11-30T23:59:59-05:00');
    const runs = occurrencesBetween(r, from, to);
    const days = DateTime.fromISO('2026-11-30').diff(DateTime.fromISO('2026-03-01'), 'days').days + 1;
    expect(runs).toHaveLength(days);
    expect(days).toBe(275);

    const seen = new Set<string>();
    let expectedDay = DateTime.fromISO('2026-03-01', { zone: NY });
    for (const run of runs) {
      const l = DateTime.fromJSDate(run, { zone: NY });
      expect(l.toISODate()).toBe(expectedDay.toISODate());
      expect([l.hour, l.minute, l.second, l.millisecond]).toEqual([9, 0, 0, 0]);
      const inDst = run >= new Date('2026-03-08T07:00:00Z') && run < new Date('2026-11-01T06:00:00Z');
      expect(run.getUTCHours()).toBe(inDst ? 13 : 14);
      seen.add(l.toISODate()!);
      expectedDay = expectedDay.plus({ days: 1 });
    }
    expect(seen.size).toBe(days);
    for (let i = 1; i < runs.length; i++) {
      expect([23 * HOUR, 24 * HOUR, 25 * HOUR]).toContain(runs[i].getTime() - runs[i - 1].getTime());
    }
  });
});

describe('Europe/London (2026-03-29 spring forward, 2026-10-25 fall back)', () => {
  const LON = 'Europe/London';

  it('01:30 is shifted to 02:30 BST in the gap and takes BST in the overlap', () => {
    const spring = rule('daily', LON, '2026-03-28T01:30:00Z');
    expect(series(spring, 0, 2)).toEqual(['2026-03-28T01:30:00+00:00', '2026-03-29T02:30:00+01:00', '2026-03-30T01:30:00+01:00']);
    const fall = rule('daily', LON, '2026-10-24T01:30:00+01:00');
    expect(series(fall, 0, 2)).toEqual(['2026-10-24T01:30:00+01:00', '2026-10-25T01:30:00+01:00', '2026-10-26T01:30:00+00:00']);
    expect(utc(occurrenceAt(fall, 1))).toBe('2026-10-25T00:30:00.000Z');
  });

  it('09:00 keeps its wall clock', () => {
    const r = rule('daily', LON, '2026-03-28T09:00:00Z');
    expect([0, 1].map((k) => utc(occurrenceAt(r, k)))).toEqual(['2026-03-28T09:00:00.000Z', '2026-03-29T08:00:00.000Z']);
    const fall = rule('daily', LON, '2026-10-24T09:00:00+01:00');
    expect([0, 1].map((k) => utc(occurrenceAt(fall, k)))).toEqual(['2026-10-24T08:00:00.000Z', '2026-10-25T09:00:00.000Z']);
  });
});

describe('Australia/Sydney (2026-04-05 fall back, 2026-10-04 spring forward)', () => {
  const SYD = 'Australia/Sydney';

  it('02:30 takes AEDT (the first) on 5 April', () => {
    const r = rule('daily', SYD, '2026-04-04T02:30:00+11:00');
    expect(series(r, 0, 2)).toEqual(['2026-04-04T02:30:00+11:00', '2026-04-05T02:30:00+11:00', '2026-04-06T02:30:00+10:00']);
    expect(utc(occurrenceAt(r, 1))).toBe('2026-04-04T15:30:00.000Z');
  });

  it('02:30 moves to 03:30 AEDT on 4 October', () => {
    const r = rule('daily', SYD, '2026-10-03T02:30:00+10:00');
    expect(series(r, 0, 2)).toEqual(['2026-10-03T02:30:00+10:00', '2026-10-04T03:30:00+11:00', '2026-10-05T02:30:00+11:00']);
  });

  it('09:00 keeps its wall clock through both transitions', () => {
    const r = rule('weekly', SYD, '2026-03-29T09:00:00+11:00');
    expect(series(r, 0, 1)).toEqual(['2026-03-29T09:00:00+11:00', '2026-04-05T09:00:00+10:00']);
    expect([0, 1].map((k) => utc(occurrenceAt(r, k)))).toEqual(['2026-03-28T22:00:00.000Z', '2026-04-04T23:00:00.000Z']);
    const spring = rule('daily', SYD, '2026-10-03T09:00:00+10:00');
    expect([0, 1].map((k) => utc(occurrenceAt(spring, k)))).toEqual(['2026-10-02T23:00:00.000Z', '2026-10-03T22:00:00.000Z']);
  });
});

describe('zones without DST and with fractional offsets', () => {
  it('Asia/Tokyo: daily runs are exactly 24 hours apart all year', () => {
    const r = rule('daily', 'Asia/Tokyo', '2026-01-01T09:00:00+09:00');
    const runs = occurrencesBetween(r, new Date('2025-12-31T00:00:00Z'), new Date('2026-12-31T23:59:59Z'));
    expect(runs).toHaveLength(365);
    for (let i = 1; i < runs.length; i++) expect(runs[i].getTime() - runs[i - 1].getTime()).toBe(DAY);
    expect(runs.every((d) => d.getUTCHours() === 0 && d.getUTCMinutes() === 0)).toBe(true);
  });

  it('Asia/Tokyo monthly on the 31st', () => {
    const r = rule('monthly', 'Asia/Tokyo', '2026-01-31T08:00:00+09:00');
    expect(series(r, 0, 2)).toEqual(['2026-01-31T08:00:00+09:00', '2026-02-28T08:00:00+09:00', '2026-03-31T08:00:00+09:00']);
  });

  it('Asia/Kolkata (+05:30) keeps the half-hour offset', () => {
    const r = rule('weekly', 'Asia/Kolkata', '2026-03-02T09:00:00+05:30');
    expect([0, 1, 30].map((k) => utc(occurrenceAt(r, k)))).toEqual([
      '2026-03-02T03:30:00.000Z',
      '2026-03-09T03:30:00.000Z',
      '2026-09-28T03:30:00.000Z',
    ]);
  });

  it('Australia/Adelaide (+09:30 / +10:30): gap, overlap and ordinary times', () => {
    const ADL = 'Australia/Adelaide';
    const fall = rule('daily', ADL, '2026-04-04T02:30:00+10:30');
    expect(series(fall, 0, 2)).toEqual(['2026-04-04T02:30:00+10:30', '2026-04-05T02:30:00+10:30', '2026-04-06T02:30:00+09:30']);
    expect(utc(occurrenceAt(fall, 1))).toBe('2026-04-04T16:00:00.000Z');
    const spring = rule('daily', ADL, '2026-10-03T02:30:00+09:30');
    expect(series(spring, 0, 2)).toEqual(['2026-10-03T02:30:00+09:30', '2026-10-04T03:30:00+10:30', '2026-10-05T02:30:00+10:30']);
    const nine = rule('daily', ADL, '2026-04-04T09:00:00+10:30');
    expect([0, 1].map((k) => utc(occurrenceAt(nine, k)))).toEqual(['2026-04-03T22:30:00.000Z', '2026-04-04T23:30:00.000Z']);
  });
});

describe('nextOccurrence', () => {
  const daily = rule('daily', 'America/New_York', '2026-01-10T09:00:00-05:00');

  it('before the anchor returns the anchor', () => {
    expect(nextOccurrence(daily, new Date('2020-01-01T00:00:00Z'))).toEqual(daily.startsAt);
    expect(nextOccurrence(daily, new Date(daily.startsAt.getTime() - 1))).toEqual(daily.startsAt);
  });

  it('exactly at an occurrence: exclusive gives the next one, inclusive gives it', () => {
    const third = occurrenceAt(daily, 3)!;
    expect(nextOccurrence(daily, third)).toEqual(occurrenceAt(daily, 4));
    expect(nextOccurrence(daily, third, { inclusive: true })).toEqual(third);
    expect(nextOccurrence(daily, third, { inclusive: false })).toEqual(occurrenceAt(daily, 4));
    expect(nextOccurrence(daily, daily.startsAt)).toEqual(occurrenceAt(daily, 1));
    expect(nextOccurrence(daily, daily.startsAt, { inclusive: true })).toEqual(daily.startsAt);
    expect(nextOccurrence(daily, new Date(third.getTime() - 1))).toEqual(third);
    expect(nextOccurrence(daily, new Date(third.getTime() + 1), { inclusive: true })).toEqual(occurrenceAt(daily, 4));
  });

  it('exactly at a gap-shifted and an ambiguous occurrence', () => {
    const gap = rule('daily', 'America/New_York', '2026-03-01T02:30:00-05:00');
    const shifted = occurrenceAt(gap, 7)!; // 8 March 03:30 EDT
    expect(local(shifted, gap.timezone)).toBe('2026-03-08T03:30:00-04:00');
    expect(nextOccurrence(gap, shifted, { inclusive: true })).toEqual(shifted);
    expect(local(nextOccurrence(gap, shifted), gap.timezone)).toBe('2026-03-09T02:30:00-04:00');

    const overlap = rule('daily', 'America/New_York', '2026-10-20T01:30:00-04:00');
    const first = new Date('2026-11-01T05:30:00Z');
    expect(nextOccurrence(overlap, first, { inclusive: true })).toEqual(first);
    // Between the two 01:30s the next run is the following day, not the second 01:30.
    expect(local(nextOccurrence(overlap, first), overlap.timezone)).toBe('2026-11-02T01:30:00-05:00');
  });

  it('weekly and monthly at and around occurrences', () => {
    const weekly = rule('weekly', 'Europe/London', '2026-01-05T07:00:00Z');
    const w = occurrenceAt(weekly, 20)!;
    expect(nextOccurrence(weekly, w)).toEqual(occurrenceAt(weekly, 21));
    expect(nextOccurrence(weekly, w, { inclusive: true })).toEqual(w);
    expect(nextOccurrence(weekly, new Date(w.getTime() - 3 * DAY))).toEqual(w);

    const monthly = rule('monthly', 'Europe/London', '2026-01-31T23:30:00Z');
    const m = occurrenceAt(monthly, 1)!;
    expect(local(m, monthly.timezone)).toBe('2026-02-28T23:30:00+00:00');
    expect(nextOccurrence(monthly, m)).toEqual(occurrenceAt(monthly, 2));
    expect(nextOccurrence(monthly, m, { inclusive: true })).toEqual(m);
    // After the clamped run on 28 February, the next is 31 March, not 28 March.
    expect(local(nextOccurrence(monthly, new Date('2026-03-01T00:00:00Z')), monthly.timezone)).toBe('2026-03-31T23:30:00+01:00');
  });

  it('finds occurrences years after the anchor', () => {
    const monthly = rule('monthly', 'Australia/Sydney', '2020-01-31T09:00:00+11:00');
    expect(local(nextOccurrence(monthly, new Date('2035-02-10T00:00:00Z')), monthly.timezone)).toBe('2035-02-28T09:00:00+11:00');
    const weekly = rule('weekly', 'UTC', '2020-01-01T00:00:00Z'); // Wednesdays
    expect(utc(nextOccurrence(weekly, new Date('2035-06-15T12:00:00Z')))).toBe('2035-06-20T00:00:00.000Z');
    const d = rule('daily', 'America/New_York', '2020-01-01T09:00:00-05:00');
    expect(local(nextOccurrence(d, new Date('2035-07-04T13:00:00Z')), d.timezone)).toBe('2035-07-05T09:00:00-04:00');
    expect(local(nextOccurrence(d, new Date('2035-07-04T12:59:59Z')), d.timezone)).toBe('2035-07-04T09:00:00-04:00');
  });

  it('agrees with a scan from k = 0 over ten years', () => {
    const d = rule('daily', 'Australia/Adelaide', '2026-01-01T02:30:00+10:30');
    const all: Date[] = [];
    for (let k = 0; k < 3700; k++) all.push(occurrenceAt(d, k)!);
    for (const probe of [1, 100, 1000, 2000, 3000, 3650]) {
      const t = new Date(all[probe].getTime() - 1);
      expect(nextOccurrence(d, t)).toEqual(all[probe]);
      expect(nextOccurrence(d, all[probe])).toEqual(all[probe + 1]);
    }
  });
});

describe('occurrencesBetween', () => {
  const r = rule('daily', 'UTC', '2026-01-01T12:00:00Z');

  it('is the half-open interval (from, to]', () => {
    const from = new Date('2026-01-02T12:00:00Z');
    const to = new Date('2026-01-05T12:00:00Z');
    expect(occurrencesBetween(r, from, to).map(utc)).toEqual([
      '2026-01-03T12:00:00.000Z',
      '2026-01-04T12:00:00.000Z',
      '2026-01-05T12:00:00.000Z',
    ]);
  });

  it('starts at the anchor when from is earlier', () => {
    const runs = occurrencesBetween(r, new Date('2025-06-01T00:00:00Z'), new Date('2026-01-02T12:00:00Z'));
    expect(runs.map(utc)).toEqual(['2026-01-01T12:00:00.000Z', '2026-01-02T12:00:00.000Z']);
  });

  it('is empty for an empty or inverted interval and before the anchor', () => {
    const t = new Date('2026-01-03T12:00:00Z');
    expect(occurrencesBetween(r, t, t)).toEqual([]);
    expect(occurrencesBetween(r, t, new Date('2026-01-01T00:00:00Z'))).toEqual([]);
    expect(occurrencesBetween(r, new Date('2025-01-01T00:00:00Z'), new Date('2026-01-01T11:59:59Z'))).toEqual([]);
  });

  it('honours max and its default', () => {
    const from = new Date('2025-12-31T00:00:00Z');
    expect(occurrencesBetween(r, from, new Date('2026-12-31T00:00:00Z'), 3).map(utc)).toEqual([
      '2026-01-01T12:00:00.000Z',
      '2026-01-02T12:00:00.000Z',
      '2026-01-03T12:00:00.000Z',
    ]);
    expect(occurrencesBetween(r, from, new Date('2026-12-31T00:00:00Z'), 0)).toEqual([]);
    expect(occurrencesBetween(r, from, new Date('2040-01-01T00:00:00Z'))).toHaveLength(DEFAULT_MAX_OCCURRENCES);
    expect(() => occurrencesBetween(r, from, new Date('2040-01-01T00:00:00Z'), -1)).toThrow(RangeError);
    expect(() => occurrencesBetween(r, from, new Date('2040-01-01T00:00:00Z'), 1.5)).toThrow(RangeError);
  });

  it('lists monthly runs far from the anchor', () => {
    const monthly = rule('monthly', 'America/New_York', '2020-03-31T02:30:00-04:00');
    const runs = occurrencesBetween(monthly, new Date('2033-01-01T00:00:00Z'), new Date('2033-06-01T00:00:00Z'));
    expect(runs.map((d) => local(d, monthly.timezone))).toEqual([
      '2033-01-31T02:30:00-05:00',
      '2033-02-28T02:30:00-05:00',
      '2033-03-31T02:30:00-04:00',
      '2033-04-30T02:30:00-04:00',
      '2033-05-31T02:30:00-04:00',
    ]);
  });
});

describe('latestOccurrenceAtOrBefore', () => {
  const r = rule('weekly', 'Europe/London', '2026-01-05T07:00:00Z'); // Mondays 07:00

  it('is null before the anchor and the anchor at it', () => {
    expect(latestOccurrenceAtOrBefore(r, new Date('2026-01-05T06:59:59.999Z'))).toBeNull();
    expect(latestOccurrenceAtOrBefore(r, r.startsAt)).toEqual(r.startsAt);
  });

  it('returns an occurrence exactly at `at` and the previous one just before it', () => {
    const tenth = occurrenceAt(r, 10)!;
    expect(latestOccurrenceAtOrBefore(r, tenth)).toEqual(tenth);
    expect(latestOccurrenceAtOrBefore(r, new Date(tenth.getTime() - 1))).toEqual(occurrenceAt(r, 9));
    expect(latestOccurrenceAtOrBefore(r, new Date(tenth.getTime() + 3 * DAY))).toEqual(tenth);
  });

  it('finds the latest missed run after long downtime', () => {
    // Wednesday 2026-07-15 12:00 BST: the latest Monday 07:00 BST run is 13 July.
    expect(local(latestOccurrenceAtOrBefore(r, new Date('2026-07-15T11:00:00Z')), r.timezone)).toBe('2026-07-13T07:00:00+01:00');
    const monthly = rule('monthly', 'UTC', '2024-01-31T00:00:00Z');
    expect(utc(latestOccurrenceAtOrBefore(monthly, new Date('2031-03-30T00:00:00Z')))).toBe('2031-02-28T00:00:00.000Z');
    expect(utc(latestOccurrenceAtOrBefore(monthly, new Date('2031-03-31T00:00:00Z')))).toBe('2031-03-31T00:00:00.000Z');
  });
});
