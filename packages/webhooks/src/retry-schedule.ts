/**
 * When a failed delivery is tried again (extensions.md 5): about 5 s, 5 min, 30 min, 2 h, 5 h,
 * 10 h and 10 h after each failed attempt, then the delivery has failed. WEBHOOK_RETRY_SCHEDULE
 * (a comma list of seconds) replaces it.
 */
export const DEFAULT_RETRY_SCHEDULE_SECONDS: readonly number[] = [5, 300, 1800, 7200, 18000, 36000, 36000];

/** The schedule WEBHOOK_RETRY_SCHEDULE names (decimals allowed, e.g. `0.2,0.2` in tests); the default when unset. */
export function parseRetrySchedule(raw: string | undefined): number[] {
  if (raw === undefined || raw.trim() === '') return [...DEFAULT_RETRY_SCHEDULE_SECONDS];
  const values = raw.split(',').map((part) => part.trim());
  if (values.some((v) => v === '' || !Number.isFinite(Number(v)) || Number(v) < 0)) {
    throw new Error(`WEBHOOK_RETRY_SCHEDULE must be a comma list of seconds (numbers >= 0), got "${raw}"`);
  }
  return values.map(Number);
}

/**
 * When the attempt after `attempts` failed ones is due, in milliseconds from now; null when the
 * schedule is spent. Up to 10 % is added at random so retries of many deliveries that failed
 * together (a receiver's outage) do not all come back in the same instant.
 */
export function retryDelayMs(schedule: readonly number[], attempts: number, random: () => number = Math.random): number | null {
  const seconds = schedule[attempts - 1];
  if (seconds === undefined) return null;
  return Math.round(seconds * 1000 * (1 + 0.1 * random()));
}
