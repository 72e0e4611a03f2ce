import { ProviderError, type ProviderErrorCode } from '../types';

/**
 * One row of an adapter's error classification table: which upstream answer it matches (status
 * and the upstream's own code or reason), what it becomes, whether the job may retry, and how
 * long to wait. Every adapter keeps its whole table in one array, read top to bottom (the first
 * matching row wins), so docs/providers.md can print it as it is.
 */
export interface ErrorRule<F> {
  /** The HTTP status the row is about, as documentation: "400", "5xx", "any". */
  status: string;
  /** The upstream's code, reason or problem type, as documentation. */
  upstream: string;
  code: ProviderErrorCode;
  retryable: boolean;
  /** The wait to honour before a retry, as documentation ("" when none). */
  wait: string;
  when(facts: F): boolean;
  /** The wait in milliseconds, when the row has one. */
  waitMs?(facts: F): number | null;
}

/** The rows of a table as plain data (for docs and tests). */
export interface ErrorRow {
  status: string;
  upstream: string;
  code: ProviderErrorCode;
  retryable: boolean;
  wait: string;
}

export function rows<F>(table: readonly ErrorRule<F>[]): ErrorRow[] {
  return table.map(({ status, upstream, code, retryable, wait }) => ({ status, upstream, code, retryable, wait }));
}

/** The error of the first row matching `facts`; the table's last row must match anything. */
export function classifyBy<F>(table: readonly ErrorRule<F>[], facts: F, message: string, context: Record<string, unknown>): ProviderError {
  const rule = table.find((r) => r.when(facts));
  if (!rule) return new ProviderError('internal_error', message, false, null, context);
  return new ProviderError(rule.code, message, rule.retryable, rule.waitMs?.(facts) ?? null, context);
}

/** True when `status` is within [lo, hi]. */
export const between = (status: number, lo: number, hi: number): boolean => status >= lo && status <= hi;
