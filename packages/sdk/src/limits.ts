import type { Platform } from './types';

/** An operation's result limits, as GET /v1/platforms gives them. */
export interface OperationLimits {
  platform: string;
  operation: string;
  /** The limit a job, batch, schedule or quote gets when the request names none. */
  defaultLimit: number;
  /** The most results one target may ask for (`limit` above it: 422). */
  maxResults: number;
}

/**
 * The default and the maximum `limit` of one operation, read from the platforms list
 * (`client.platforms.list()`, or the JSON of GET /v1/platforms); null when the list has no such
 * platform or operation. The service applies exactly this default when `limit` is left out.
 */
export function operationLimits(platforms: readonly Platform[], platform: string, operation: string): OperationLimits | null {
  const found = platforms.find((p) => p.platform === platform)?.operations.find((o) => o.operation === operation);
  if (!found) return null;
  return { platform, operation, defaultLimit: found.default_limit, maxResults: found.max_results };
}
