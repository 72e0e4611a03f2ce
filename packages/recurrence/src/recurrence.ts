/**
 * Schedule recurrence: turns a schedule's (frequency, timezone, starts_at)
 * into the instants at which it runs.
 *
 * The anchor is `startsAt` read as a wall-clock date and time in the
 * schedule's IANA zone. Occurrence k (k = 0 is the anchor itself) is the
 * anchor's local date moved by k days, k weeks or k calendar months, at the
 * anchor's local wall-clock time, converted back to an instant:
 *
 * - monthly on day 29-31 clamps to the last day of shorter months and comes
 *   back to the anchor day when the month has it (every occurrence is
 *   computed from the anchor, never from the previous occurrence);
 * - a local time that does not exist on that date (the daylight-saving gap)
 *   moves forward by the length of the gap (02:30 on a spring-forward day
 *   where clocks jump 02:00 -> 03:00 becomes 03:30);
 * - a local time that exists twice (the fall-back overlap) resolves to its
 *   first occurrence, i.e. the earlier instant, at the pre-transition offset.
 *
 * The wall-clock to instant conversion is done here explicitly from the zone's
 * offsets rather than left to `DateTime.fromObject`, whose choice between the
 * two instants of an ambiguous local time varies by zone.
 */
import { IANAZone } from 'luxon';

export type Frequency = 'once' | 'daily' | 'weekly' | 'monthly';

export const FREQUENCIES: readonly Frequency[] = ['once', 'daily', 'weekly', 'monthly'];

export interface Recurrence {
  frequency: Frequency;
  /** IANA zone name, e.g. "America/New_York". */
  timezone: string;
  /** The instant the caller gave; its local date and time in `timezone` are the anchor. */
  startsAt: Date;
}

export interface NextOccurrenceOptions {
  /** Also accept an occurrence exactly equal to `after`. Default false. */
  inclusive?: boolean;
}

/** Default cap on the number of occurrences `occurrencesBetween` returns. */
export const DEFAULT_MAX_OCCURRENCES = 1000;

const MINUTE_MS = 60_000;
const DAY_MS = 86_400_000;

/** Strings that describe a fixed offset rather than a named zone. */
const OFFSET_LIKE = /^(?:[+-]|(?:utc|gmt|z)\s*[+-])/i;

/**
 * Checking a zone name builds an Intl formatter, which costs far more than
 * the arithmetic around it; the scheduler checks the same few names on every
 * tick. Bounded so arbitrary caller input cannot grow it without limit.
 */
const ZONE_VALIDITY_CACHE_SIZE = 1024;
const zoneValidity = new Map<string, boolean>();

export function isFrequency(value: string): value is Frequency {
  return (FREQUENCIES as readonly string[]).includes(value);
}

/**
 * True for a real IANA zone name ("Europe/Paris", "UTC", "Etc/UTC",
 * "Etc/GMT+2"); false for fixed offsets such as "+02:00", "-0500", "UTC+2"
 * or "GMT+02:00", and for unknown names.
 */
export function isValidTimeZone(name: string): boolean {
  if (typeof name !== 'string' || name.length === 0 || name.trim() !== name) return false;
  if (OFFSET_LIKE.test(name)) return false;
  const known = zoneValidity.get(name);
  if (known !== undefined) return known;
  const valid = IANAZone.isValidZone(name);
  if (zoneValidity.size >= ZONE_VALIDITY_CACHE_SIZE) zoneValidity.clear();
  zoneValidity.set(name, valid);
  return valid;
}

/**
 * Throws a RangeError when the rule cannot produce occurrences: unknown
 * frequency, invalid zone or an invalid `startsAt`.
 */
export function assertValidRecurrence(rule: Recurrence): void {
  if (!isFrequency(rule.frequency)) {
    throw new RangeError(`unknown frequency: ${String(rule.frequency)}`);
  }
  if (!isValidTimeZone(rule.timezone)) {
    throw new RangeError(`invalid IANA time zone: ${String(rule.timezone)}`);
  }
  if (!(rule.startsAt instanceof Date) || Number.isNaN(rule.startsAt.getTime())) {
    throw new RangeError('startsAt must be a valid Date');
  }
}

/**
 * The k-th occurrence (k = 0 is `startsAt` itself), or null when the rule has
 * no such occurrence (a once schedule past k = 0, a negative k, or a date
 * beyond the representable range).
 */
export function occurrenceAt(rule: Recurrence, k: number): Date | null {
  assertValidRecurrence(rule);
  assertIndex(k);
  const ms = occurrenceMs(prepare(rule), k);
  return ms === null ? null : new Date(ms);
}

/**
 * The first occurrence strictly after `after` (at or after it with
 * `inclusive`), or null when there is none.
 */
export function nextOccurrence(rule: Recurrence, after: Date, options: NextOccurrenceOptions = {}): Date | null {
  assertValidRecurrence(rule);
  assertInstant(after, 'after');
  const prepared = prepare(rule);
  const k = firstIndexAfter(prepared, after.getTime(), options.inclusive === true);
  const ms = occurrenceMs(prepared, k);
  return ms === null ? null : new Date(ms);
}

/**
 * Occurrences in the half-open interval (from, to], ascending, at most `max`
 * of them (default DEFAULT_MAX_OCCURRENCES).
 */
export function occurrencesBetween(rule: Recurrence, from: Date, to: Date, max: number = DEFAULT_MAX_OCCURRENCES): Date[] {
  assertValidRecurrence(rule);
  assertInstant(from, 'from');
  assertInstant(to, 'to');
  if (!Number.isInteger(max) || max < 0) {
    throw new RangeError(`max must be a non-negative integer, got ${max}`);
  }
  const fromMs = from.getTime();
  const toMs = to.getTime();
  const result: Date[] = [];
  if (toMs <= fromMs || max === 0) return result;
  const prepared = prepare(rule);
  for (let k = firstIndexAfter(prepared, fromMs, false); result.length < max; k++) {
    const ms = occurrenceMs(prepared, k);
    if (ms === null || ms > toMs) break;
    result.push(new Date(ms));
  }
  return result;
}

/**
 * The latest occurrence at or before `at`, or null when `at` is before the
 * first occurrence. Used to pick the single catch-up run after downtime.
 */
export function latestOccurrenceAtOrBefore(rule: Recurrence, at: Date): Date | null {
  assertValidRecurrence(rule);
  assertInstant(at, 'at');
  const prepared = prepare(rule);
  const k = firstIndexAfter(prepared, at.getTime(), false) - 1;
  if (k < 0) return null;
  const ms = occurrenceMs(prepared, k);
  return ms === null ? null : new Date(ms);
}

// ---------------------------------------------------------------------------
// Internals

interface LocalDateTime {
  year: number;
  /** 1-12 */
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
  millisecond: number;
}

interface Prepared {
  frequency: Frequency;
  zone: IANAZone;
  startsAtMs: number;
  anchor: LocalDateTime;
}

function prepare(rule: Recurrence): Prepared {
  const zone = IANAZone.create(rule.timezone);
  const startsAtMs = rule.startsAt.getTime();
  return { frequency: rule.frequency, zone, startsAtMs, anchor: localFields(zone, startsAtMs) };
}

function assertIndex(k: number): void {
  if (!Number.isInteger(k)) throw new RangeError(`occurrence index must be an integer, got ${k}`);
}

function assertInstant(value: Date, name: string): void {
  if (!(value instanceof Date) || Number.isNaN(value.getTime())) {
    throw new RangeError(`${name} must be a valid Date`);
  }
}

/**
 * Milliseconds since the epoch of the given fields read as UTC. Unlike
 * Date.UTC it keeps years 0-99 as they are. NaN when out of range.
 */
function fieldsToMs(f: LocalDateTime): number {
  const d = new Date(0);
  d.setUTCFullYear(f.year, f.month - 1, f.day);
  d.setUTCHours(f.hour, f.minute, f.second, f.millisecond);
  return d.getTime();
}

function msToFields(ms: number): LocalDateTime {
  const d = new Date(ms);
  return {
    year: d.getUTCFullYear(),
    month: d.getUTCMonth() + 1,
    day: d.getUTCDate(),
    hour: d.getUTCHours(),
    minute: d.getUTCMinutes(),
    second: d.getUTCSeconds(),
    millisecond: d.getUTCMilliseconds(),
  };
}

/** Offset of `zone` at instant `ms`, in minutes east of UTC. */
function offsetAt(zone: IANAZone, ms: number): number {
  return zone.offset(ms);
}

function localFields(zone: IANAZone, ms: number): LocalDateTime {
  return msToFields(ms + offsetAt(zone, ms) * MINUTE_MS);
}

function daysInMonth(year: number, month: number): number {
  const d = new Date(0);
  d.setUTCFullYear(year, month, 0); // day 0 of the next month = last day of `month`
  return d.getUTCDate();
}

/** Days since 1970-01-01 of a calendar date (proleptic Gregorian). */
function epochDay(year: number, month: number, day: number): number {
  const d = new Date(0);
  d.setUTCFullYear(year, month - 1, day);
  return Math.floor(d.getTime() / DAY_MS);
}

/**
 * The instant at which `local` (a wall-clock date and time) happens in
 * `zone`. Ambiguous times take the earlier instant; times inside a gap are
 * read with the offset in force before the gap, which moves them forward by
 * the gap's length. Returns null when out of range.
 */
function resolveLocal(zone: IANAZone, local: LocalDateTime): number | null {
  const wall = fieldsToMs(local);
  if (!Number.isFinite(wall)) return null;
  // Every instant whose local reading can be `wall` lies within 14 hours of
  // it; the offsets a day either side are those before and after any
  // transition near this wall-clock time.
  const before = offsetAt(zone, wall - DAY_MS);
  const after = offsetAt(zone, wall + DAY_MS);
  if (before === after) {
    // The usual case: no transition nearby, one instant reads `wall`.
    const candidate = wall - before * MINUTE_MS;
    if (offsetAt(zone, candidate) === before) return candidate;
  }
  const offsets = new Set<number>([before, after, offsetAt(zone, wall - before * MINUTE_MS), offsetAt(zone, wall - after * MINUTE_MS)]);
  let best: number | null = null;
  for (const offset of offsets) {
    const candidate = wall - offset * MINUTE_MS;
    if (offsetAt(zone, candidate) === offset && (best === null || candidate < best)) {
      best = candidate;
    }
  }
  if (best !== null) return best;
  // In a gap: the wall time read with the pre-transition offset lands after
  // the transition, shifted forward by exactly the gap.
  return wall - before * MINUTE_MS;
}

/** The anchor's local date moved by k periods; null for a once rule past k = 0. */
function localDateFor(p: Prepared, k: number): LocalDateTime | null {
  const a = p.anchor;
  switch (p.frequency) {
    case 'once':
      return null;
    case 'daily':
    case 'weekly': {
      const days = p.frequency === 'daily' ? k : 7 * k;
      const d = new Date(0);
      d.setUTCFullYear(a.year, a.month - 1, a.day + days);
      if (Number.isNaN(d.getTime())) return null;
      return {
        ...a,
        year: d.getUTCFullYear(),
        month: d.getUTCMonth() + 1,
        day: d.getUTCDate(),
      };
    }
    case 'monthly': {
      const monthIndex = a.month - 1 + k;
      const year = a.year + Math.floor(monthIndex / 12);
      const month = (((monthIndex % 12) + 12) % 12) + 1;
      return { ...a, year, month, day: Math.min(a.day, daysInMonth(year, month)) };
    }
  }
}

function occurrenceMs(p: Prepared, k: number): number | null {
  if (k < 0) return null;
  if (k === 0) return p.startsAtMs;
  const local = localDateFor(p, k);
  if (local === null) return null;
  return resolveLocal(p.zone, local);
}

/**
 * An index at or just below the first occurrence after `ms`,
 * computed from the calendar distance between the anchor's local date and
 * the local date of `ms`.
 */
function estimateIndex(p: Prepared, ms: number): number {
  if (ms < p.startsAtMs) return 0;
  const a = p.anchor;
  const t = localFields(p.zone, ms);
  switch (p.frequency) {
    case 'once':
      return 0;
    case 'daily':
      return epochDay(t.year, t.month, t.day) - epochDay(a.year, a.month, a.day);
    case 'weekly':
      return Math.floor((epochDay(t.year, t.month, t.day) - epochDay(a.year, a.month, a.day)) / 7);
    case 'monthly':
      return t.year * 12 + (t.month - 1) - (a.year * 12 + (a.month - 1));
  }
}

/**
 * The smallest k whose occurrence is after `ms` (at or after when
 * `inclusive`). For a once rule whose only occurrence is not, returns 1 (an
 * index without an occurrence). Occurrences strictly increase with k, so a
 * short walk from the estimate settles it.
 */
function firstIndexAfter(p: Prepared, ms: number, inclusive: boolean): number {
  const qualifies = (k: number): boolean => {
    const occ = occurrenceMs(p, k);
    // Past the end (once, or beyond the representable range) counts as after.
    return occ === null || (inclusive ? occ >= ms : occ > ms);
  };
  let k = Math.max(0, estimateIndex(p, ms));
  while (k > 0 && qualifies(k - 1)) k--;
  while (!qualifies(k)) k++;
  return k;
}
