/** Retry timing of webhook deliveries; the schedule itself is configuration (WEBHOOK_RETRY_SCHEDULE, packages/config). */

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
