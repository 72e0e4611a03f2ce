/** The clock is injected wherever time decides behaviour, so tests can move it. */
export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };

/** First day of the UTC month containing `at`, as YYYY-MM-DD. */
export function periodStartOf(at: Date): string {
  return `${at.getUTCFullYear()}-${String(at.getUTCMonth() + 1).padStart(2, '0')}-01`;
}
