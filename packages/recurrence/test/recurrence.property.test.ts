import fc from 'fast-check';
import { DateTime } from 'luxon';
import {
  type Frequency,
  type Recurrence,
  latestOccurrenceAtOrBefore,
  nextOccurrence,
  occurrenceAt,
  occurrencesBetween,
} from '../src/recurrence';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

/** Zones whose daylight-saving shift, where they have one, is one hour. */
const ONE_HOUR_ZONES = [
  'UTC',
  'America/New_York',
  'America/Los_Angeles',
  'America/St_Johns', // -03:30 / -02:30
  'America/Havana', // transitions at midnight
  'America/Santiago', // southern hemisphere, transitions at midnight
  'Europe/London',
  'Europe/Dublin',
  'Europe/Berlin',
  'Africa/Casablanca', // shifts around Ramadan
  'Asia/Tokyo',
  'Asia/Kolkata', // +05:30
  'Asia/Kathmandu', // +05:45
  'Asia/Tehran', // DST until 2022
  'Australia/Sydney',
  'Australia/Adelaide', // +09:30 / +10:30
  'Pacific/Auckland',
  'Pacific/Chatham', // +12:45 / +13:45
] as const;
/** Lord Howe Island shifts by 30 minutes. */
const ZONES = [...ONE_HOUR_ZONES, 'Australia/Lord_Howe'] as const;
type Zone = (typeof ZONES)[number];

const FREQUENCIES: Frequency[] = ['once', 'daily', 'weekly', 'monthly'];
const RANGE_START = Date.UTC(2020, 0, 1);
const RANGE_END = Date.UTC(2036, 0, 1);

function offsetAt(zone: string, ms: number): number {
  return DateTime.fromMillis(ms, { zone }).offset;
}

/** The zone's local reading of `ms`, as milliseconds of a naive (UTC-read) wall clock. */
function wallOf(zone: string, ms: number): number {
  return ms + offsetAt(zone, ms) * MINUTE;
}

interface Transition {
  at: number;
  before: number;
  after: number;
}

/** Offset changes of `zone` between 2020 and 2036, found by a daily scan and bisection. */
function transitionsOf(zone: string): Transition[] {
  const found: Transition[] = [];
  let prev = offsetAt(zone, RANGE_START);
  for (let t = RANGE_START + DAY; t <= RANGE_END; t += DAY) {
    const cur = offsetAt(zone, t);
    if (cur !== prev) {
      let lo = t - DAY;
      let hi = t;
      while (hi - lo > MINUTE) {
        const mid = lo + Math.floor((hi - lo) / 2 / MINUTE) * MINUTE;
        if (offsetAt(zone, mid) === prev) lo = mid;
        else hi = mid;
      }
      found.push({ at: hi, before: prev, after: cur });
      prev = cur;
    }
  }
  return found;
}

const TRANSITIONS = new Map<string, Transition[]>(ZONES.map((z) => [z, transitionsOf(z)]));
const ZONES_WITH_TRANSITIONS = ZONES.filter((z) => TRANSITIONS.get(z)!.length > 0);

/**
 * Every instant whose local reading in `zone` is the naive wall clock
 * `wall`, ascending, found by collecting the offsets the zone uses in a
 * window of ±16 hours.
 */
function instantsReading(zone: string, wall: number): number[] {
  const offsets = new Set<number>();
  for (let t = wall - 16 * HOUR; t <= wall + 16 * HOUR; t += 15 * MINUTE) offsets.add(offsetAt(zone, t));
  const result = new Set<number>();
  for (const o of offsets) {
    const candidate = wall - o * MINUTE;
    if (offsetAt(zone, candidate) === o) result.add(candidate);
  }
  return [...result].sort((a, b) => a - b);
}

/** The anchor's local date moved by k periods (luxon calendar arithmetic, clamped months), at the anchor's wall clock. */
function expectedWall(rule: Recurrence, k: number): number {
  const anchor = DateTime.fromJSDate(rule.startsAt, { zone: rule.timezone });
  const naive = DateTime.fromObject(
    {
      year: anchor.year,
      month: anchor.month,
      day: anchor.day,
      hour: anchor.hour,
      minute: anchor.minute,
      second: anchor.second,
      millisecond: anchor.millisecond,
    },
    { zone: 'utc' },
  );
  switch (rule.frequency) {
    case 'daily':
      return naive.plus({ days: k }).toMillis();
    case 'weekly':
      return naive.plus({ weeks: k }).toMillis();
    case 'monthly':
      return naive.plus({ months: k }).toMillis();
    case 'once':
      throw new Error('once has no k > 0');
  }
}

// ---------------------------------------------------------------------------
// Generators

const zoneArb = fc.constantFrom<Zone>(...ZONES);
const frequencyArb = fc.constantFrom<Frequency>(...FREQUENCIES);
const recurringArb = fc.constantFrom<Frequency>('daily', 'weekly', 'monthly');

/** Local wall-clock fields in 2020-2035, biased towards transition hours and month ends. */
const localFieldsArb = fc.record({
  year: fc.integer({ min: 2020, max: 2035 }),
  month: fc.integer({ min: 1, max: 12 }),
  day: fc.oneof(fc.integer({ min: 1, max: 31 }), fc.constantFrom(28, 29, 30, 31)),
  hour: fc.oneof(fc.integer({ min: 0, max: 23 }), fc.constantFrom(0, 1, 2, 3, 23)),
  minute: fc.oneof(fc.integer({ min: 0, max: 59 }), fc.constantFrom(0, 15, 30, 45)),
  second: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 59 })),
  millisecond: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 999 })),
});

type LocalFields = { year: number; month: number; day: number; hour: number; minute: number; second: number; millisecond: number };

/** An instant reading `fields` in `zone`, the day clamped to the month. */
function instantFromLocal(zone: string, fields: LocalFields): Date {
  const daysInMonth = DateTime.fromObject({ year: fields.year, month: fields.month }, { zone: 'utc' }).daysInMonth!;
  return DateTime.fromObject({ ...fields, day: Math.min(fields.day, daysInMonth) }, { zone }).toJSDate();
}

/** An anchor from random local fields or a random instant. */
const anchorArb = fc
  .tuple(zoneArb, localFieldsArb, fc.date({ min: new Date(RANGE_START), max: new Date(RANGE_END - 1), noInvalidDate: true }), fc.boolean())
  .map(([zone, fields, instant, useFields]) => ({
    zone,
    startsAt: useFields ? instantFromLocal(zone, fields) : instant,
  }));

const ruleArb = fc
  .tuple(anchorArb, frequencyArb)
  .map(([a, frequency]): Recurrence => ({ frequency, timezone: a.zone, startsAt: a.startsAt }));

const recurringRuleArb = fc
  .tuple(anchorArb, recurringArb)
  .map(([a, frequency]): Recurrence => ({ frequency, timezone: a.zone, startsAt: a.startsAt }));

/**
 * A recurring rule whose occurrence `k` falls on the local date of a DST
 * transition, at a wall-clock time within two hours of it.
 */
const nearTransitionArb = fc
  .record({
    zone: fc.constantFrom(...ZONES_WITH_TRANSITIONS),
    pick: fc.nat(),
    frequency: recurringArb,
    k: fc.integer({ min: 0, max: 4 }),
    deltaMinutes: fc.integer({ min: -120, max: 120 }),
    second: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 59 })),
  })
  .map(({ zone, pick, frequency, k, deltaMinutes, second }) => {
    const list = TRANSITIONS.get(zone)!;
    const tr = list[pick % list.length];
    // Wall clock at the transition, read with the offset before it.
    const wall = DateTime.fromMillis(tr.at + tr.before * MINUTE + deltaMinutes * MINUTE + second * 1000, { zone: 'utc' });
    const anchorDate =
      frequency === 'daily' ? wall.minus({ days: k }) : frequency === 'weekly' ? wall.minus({ weeks: k }) : wall.minus({ months: k });
    const startsAt = DateTime.fromObject(
      {
        year: anchorDate.year,
        month: anchorDate.month,
        day: anchorDate.day,
        hour: anchorDate.hour,
        minute: anchorDate.minute,
        second: anchorDate.second,
      },
      { zone },
    ).toJSDate();
    return { rule: { frequency, timezone: zone, startsAt }, k };
  });

/** Index ranges that keep brute-force scans short but still reach years out. */
function kRangeArb(frequency: Frequency): fc.Arbitrary<number> {
  const far = frequency === 'daily' ? 5000 : frequency === 'weekly' ? 700 : 180;
  return fc.oneof(fc.integer({ min: 0, max: 5 }), fc.integer({ min: 0, max: far }));
}

// ---------------------------------------------------------------------------
// Properties

/** Checks occurrence k of `rule` against the wall-clock oracle. */
function checkWallClock(rule: Recurrence, k: number): void {
  const occ = occurrenceAt(rule, k);
  if (k === 0) {
    expect(occ).toEqual(rule.startsAt);
    return;
  }
  expect(occ).not.toBeNull();
  const occMs = occ!.getTime();
  const wall = expectedWall(rule, k);
  const instants = instantsReading(rule.timezone, wall);
  if (instants.length > 0) {
    // The wall clock exists on that date: the earliest instant reading it.
    expect(occMs).toBe(instants[0]);
  } else {
    // In a gap: moved forward by exactly the gap.
    const pre = offsetAt(rule.timezone, occMs - 3 * HOUR);
    const post = offsetAt(rule.timezone, occMs);
    expect(post).toBeGreaterThan(pre);
    expect(wallOf(rule.timezone, occMs)).toBe(wall + (post - pre) * MINUTE);
  }
}

describe('recurrence properties', () => {
  it('found DST transitions to exercise', () => {
    expect(TRANSITIONS.get('America/New_York')!.length).toBeGreaterThanOrEqual(30);
    expect(TRANSITIONS.get('Asia/Tokyo')).toEqual([]);
    const ny2026 = TRANSITIONS.get('America/New_York')!.filter((t) => new Date(t.at).getUTCFullYear() === 2026);
    expect(ny2026.map((t) => new Date(t.at).toISOString())).toEqual(['2026-03-08T07:00:00.000Z', '2026-11-01T06:00:00.000Z']);
  });

  it('occurrences strictly increase with k; once has only k = 0', () => {
    fc.assert(
      fc.property(
        ruleArb.chain((rule) => fc.tuple(fc.constant(rule), kRangeArb(rule.frequency))),
        ([rule, k0]) => {
          if (rule.frequency === 'once') {
            expect(occurrenceAt(rule, 0)).toEqual(rule.startsAt);
            expect(occurrenceAt(rule, 1 + k0)).toBeNull();
            return;
          }
          let prev = occurrenceAt(rule, k0)!.getTime();
          for (let k = k0 + 1; k <= k0 + 15; k++) {
            const cur = occurrenceAt(rule, k)!.getTime();
            expect(cur).toBeGreaterThan(prev);
            prev = cur;
          }
        },
      ),
      { numRuns: 200 },
    );
  });

  it('occurrences strictly increase across DST transitions', () => {
    fc.assert(
      fc.property(nearTransitionArb, ({ rule, k }) => {
        let prev = occurrenceAt(rule, 0)!.getTime();
        for (let j = 1; j <= k + 3; j++) {
          const cur = occurrenceAt(rule, j)!.getTime();
          expect(cur).toBeGreaterThan(prev);
          prev = cur;
        }
      }),
      { numRuns: 300 },
    );
  });

  it('consecutive daily occurrences are 23, 24 or 25 hours apart (23.5/24.5 on Lord Howe)', () => {
    const dailyArb = fc.oneof(
      fc.tuple(anchorArb, fc.integer({ min: 0, max: 5000 })).map(([a, k0]) => ({
        rule: { frequency: 'daily' as const, timezone: a.zone, startsAt: a.startsAt },
        k0,
      })),
      nearTransitionArb.map(({ rule, k }) => ({ rule: { ...rule, frequency: 'daily' as const }, k0: Math.max(0, k - 2) })),
    );
    fc.assert(
      fc.property(dailyArb, ({ rule, k0 }) => {
        const allowed = rule.timezone === 'Australia/Lord_Howe' ? [23.5 * HOUR, 24 * HOUR, 24.5 * HOUR] : [23 * HOUR, 24 * HOUR, 25 * HOUR];
        for (let k = k0; k < k0 + 6; k++) {
          const gap = occurrenceAt(rule, k + 1)!.getTime() - occurrenceAt(rule, k)!.getTime();
          expect(allowed).toContain(gap);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('each occurrence keeps the anchor wall clock where it exists, else the gap-shifted time', () => {
    fc.assert(
      fc.property(
        recurringRuleArb.chain((rule) => fc.tuple(fc.constant(rule), kRangeArb(rule.frequency))),
        ([rule, k]) => checkWallClock(rule, k),
      ),
      { numRuns: 300 },
    );
  });

  it('on DST transition days: the gap moves forward, the overlap takes the first instant', () => {
    let gaps = 0;
    let overlaps = 0;
    fc.assert(
      fc.property(nearTransitionArb, ({ rule, k }) => {
        checkWallClock(rule, k);
        if (k > 0) {
          const n = instantsReading(rule.timezone, expectedWall(rule, k)).length;
          if (n === 0) gaps++;
          if (n === 2) overlaps++;
        }
      }),
      { numRuns: 500 },
    );
    // The generator does reach both kinds of transition.
    expect(gaps).toBeGreaterThan(0);
    expect(overlaps).toBeGreaterThan(0);
  });

  it('weekly occurrences keep the weekday; monthly ones land on min(anchor day, days in month)', () => {
    fc.assert(
      fc.property(anchorArb, fc.integer({ min: 1, max: 200 }), fc.boolean(), ({ zone, startsAt }, k, weekly) => {
        const anchor = DateTime.fromJSDate(startsAt, { zone });
        if (weekly) {
          const occ = occurrenceAt({ frequency: 'weekly', timezone: zone, startsAt }, k)!;
          const expectedDate = DateTime.fromObject({ year: anchor.year, month: anchor.month, day: anchor.day }, { zone: 'utc' }).plus({
            weeks: k,
          });
          const l = DateTime.fromJSDate(occ, { zone });
          // No zone in the list has a gap or overlap that crosses midnight, so the local date is exact.
          expect(l.toISODate()).toBe(expectedDate.toISODate());
          expect(l.weekday).toBe(anchor.weekday);
          return;
        }
        const occ = occurrenceAt({ frequency: 'monthly', timezone: zone, startsAt }, k)!;
        const l = DateTime.fromJSDate(occ, { zone });
        const monthIndex = anchor.year * 12 + (anchor.month - 1) + k;
        const year = Math.floor(monthIndex / 12);
        const month = (monthIndex % 12) + 1;
        const dim = DateTime.fromObject({ year, month }, { zone: 'utc' }).daysInMonth!;
        expect([l.year, l.month, l.day]).toEqual([year, month, Math.min(anchor.day, dim)]);
      }),
      { numRuns: 300 },
    );
  });

  it('nextOccurrence, latestOccurrenceAtOrBefore and occurrencesBetween agree with a brute-force scan', () => {
    const scenarioArb = ruleArb.chain((rule) => {
      const period = rule.frequency === 'weekly' ? 7 * DAY : rule.frequency === 'monthly' ? 31 * DAY : DAY;
      const start = rule.startsAt.getTime();
      const freeProbe = fc.integer({ min: start - 3 * DAY, max: start + 300 * period });
      const atOccurrence = fc
        .tuple(fc.integer({ min: 0, max: rule.frequency === 'once' ? 0 : 300 }), fc.constantFrom(-1, 0, 0, 1))
        .map(([k, nudge]) => occurrenceAt(rule, k)!.getTime() + nudge);
      return fc.tuple(fc.constant(rule), fc.oneof(freeProbe, atOccurrence), fc.boolean(), fc.integer({ min: 0, max: 20 * period }));
    });
    fc.assert(
      fc.property(scenarioArb, ([rule, probe, inclusive, windowMs]) => {
        const t = new Date(probe);
        // Brute force: every occurrence from k = 0 until two past the window.
        const all: number[] = [];
        const limit = probe + windowMs;
        let beyond = 0;
        for (let k = 0; beyond < 2; k++) {
          const occ = occurrenceAt(rule, k);
          if (occ === null) break;
          all.push(occ.getTime());
          if (occ.getTime() > limit) beyond++;
        }
        const firstAfter = all.find((x) => (inclusive ? x >= probe : x > probe));
        const next = nextOccurrence(rule, t, { inclusive });
        expect(next === null ? null : next.getTime()).toBe(firstAfter ?? null);

        const atOrBefore = all.filter((x) => x <= probe);
        const latest = latestOccurrenceAtOrBefore(rule, t);
        expect(latest === null ? null : latest.getTime()).toBe(atOrBefore.length > 0 ? atOrBefore[atOrBefore.length - 1] : null);

        const between = occurrencesBetween(rule, t, new Date(limit), 10_000).map((d) => d.getTime());
        expect(between).toEqual(all.filter((x) => x > probe && x <= limit));
      }),
      { numRuns: 200 },
    );
  });

  it('nextOccurrence far from the anchor is the smallest occurrence after the probe', () => {
    const farArb = recurringRuleArb.chain((rule) =>
      fc.tuple(
        fc.constant(rule),
        fc.integer({ min: rule.startsAt.getTime(), max: rule.startsAt.getTime() + 15 * 366 * DAY }),
        fc.boolean(),
      ),
    );
    fc.assert(
      fc.property(farArb, ([rule, probe, inclusive]) => {
        const qualifies = (k: number): boolean => {
          const occ = occurrenceAt(rule, k)!.getTime();
          return inclusive ? occ >= probe : occ > probe;
        };
        // Binary search for the smallest qualifying k over the increasing sequence.
        let lo = 0;
        let hi = 8000;
        expect(qualifies(hi)).toBe(true);
        while (lo < hi) {
          const mid = Math.floor((lo + hi) / 2);
          if (qualifies(mid)) hi = mid;
          else lo = mid + 1;
        }
        const next = nextOccurrence(rule, new Date(probe), { inclusive })!;
        expect(next.getTime()).toBe(occurrenceAt(rule, lo)!.getTime());
        // The latest occurrence at or before the probe is the one just below the first one after it.
        const latestIndex = inclusive && next.getTime() === probe ? lo : lo - 1;
        const latest = latestOccurrenceAtOrBefore(rule, new Date(probe));
        expect(latest === null ? null : latest.getTime()).toBe(latestIndex < 0 ? null : occurrenceAt(rule, latestIndex)!.getTime());
      }),
      { numRuns: 300 },
    );
  });
});
