/**
 * Magic tokens: a substring of the target, matched case-insensitively, that makes the sandbox
 * behave like a specific upstream situation (decisions.md, "Sandbox provider").
 */
export interface SandboxTokens {
  /** `sandbox_not_found`: the target does not exist (terminal failure). */
  notFound: boolean;
  /** `sandbox_private`: the target is private (terminal failure). */
  private: boolean;
  /** `sandbox_flaky_N`: attempts 1..N fail with a retryable error; 0 when absent. */
  flakyAttempts: number;
  /** `sandbox_slow_MS`: milliseconds waited before each page; 0 when absent. */
  slowMs: number;
  /** `sandbox_empty`: the target has no results. */
  empty: boolean;
  /** `sandbox_count_N`: the target has N results (min(N, limit) are delivered); null when absent. */
  count: number | null;
  /**
   * `sandbox_rolling_N`: the target's items form a feed that gains N new items every second,
   * newest first, with IDs increasing with time; 0 when absent.
   */
  rolling: number;
  /**
   * `sandbox_drift_N`: the target's profile counts (followers, following, posts) and its items'
   * metrics (views, likes, comments, shares) grow by N per second since SANDBOX_DRIFT_EPOCH, so
   * two reads a few seconds apart differ; null counts stay null. 0 when absent.
   */
  drift: number;
}

/** Where `sandbox_drift_N` starts counting: 2026-01-01T00:00:00Z. */
export const SANDBOX_DRIFT_EPOCH_MS = Date.parse('2026-01-01T00:00:00Z');

function numberAfter(target: string, token: string): number | null {
  const match = new RegExp(`${token}_(\\d+)`, 'i').exec(target);
  if (!match) return null;
  const value = Number(match[1]);
  return Number.isSafeInteger(value) ? value : Number.MAX_SAFE_INTEGER;
}

export function parseSandboxTokens(target: string): SandboxTokens {
  const lower = target.toLowerCase();
  return {
    notFound: lower.includes('sandbox_not_found'),
    private: lower.includes('sandbox_private'),
    flakyAttempts: numberAfter(target, 'sandbox_flaky') ?? 0,
    slowMs: numberAfter(target, 'sandbox_slow') ?? 0,
    empty: lower.includes('sandbox_empty'),
    count: numberAfter(target, 'sandbox_count'),
    rolling: numberAfter(target, 'sandbox_rolling') ?? 0,
    drift: numberAfter(target, 'sandbox_drift') ?? 0,
  };
}
