import { DateTime } from 'luxon';

/** Milliseconds until the next midnight in America/Los_Angeles (when YouTube quotas reset). */
export function msUntilMidnightPacific(now: number = Date.now()): number {
  const local = DateTime.fromMillis(now, { zone: 'America/Los_Angeles' });
  const midnight = local.plus({ days: 1 }).startOf('day');
  return Math.max(0, midnight.toMillis() - now);
}
