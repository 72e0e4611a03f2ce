import type { RequestHandler, Response } from 'express';
import type { RedisClient } from '@sdx/queue';
import { RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import { ApiError, type Tenant } from '@sdx/domain/api';

export interface RateDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Milliseconds until the current window ends. */
  resetMs: number;
}

/** Per-workspace, per-minute request limiter. */
export interface RateLimiter {
  consume(workspaceId: string, limitPerMinute: number): Promise<RateDecision>;
}

export class RateLimiterUnavailable extends Error {}

/**
 * One rate-limiter-flexible instance per process over the shared Redis, so every API process
 * counts against the same fixed one-minute window per workspace. Each workspace has its own
 * allowance: the limiter counts (with a ceiling no plan reaches) and the allowance is compared
 * here, which keeps one instance for all plans.
 *
 * Requests of one workspace that reach the limiter in the same turn of the event loop are
 * counted by one Redis call of as many points; each then gets the count it would have got had
 * they been counted one by one, in arrival order, so the decisions and headers are the same
 * as with one call each.
 */
export class RedisRateLimiter implements RateLimiter {
  private readonly limiter: RateLimiterRedis;
  private pending = new Map<string, Array<{ limit: number; resolve: (d: RateDecision) => void; reject: (e: unknown) => void }>>();

  constructor(redis: RedisClient, keyPrefix: string) {
    this.limiter = new RateLimiterRedis({
      storeClient: redis,
      keyPrefix: `${keyPrefix}:rl`,
      points: Number.MAX_SAFE_INTEGER,
      duration: 60,
    });
  }

  consume(workspaceId: string, limitPerMinute: number): Promise<RateDecision> {
    return new Promise((resolve, reject) => {
      if (this.pending.size === 0) setImmediate(() => this.flush());
      const waiting = this.pending.get(workspaceId);
      const entry = { limit: limitPerMinute, resolve, reject };
      if (waiting) waiting.push(entry);
      else this.pending.set(workspaceId, [entry]);
    });
  }

  private flush(): void {
    const batch = this.pending;
    this.pending = new Map();
    for (const [workspaceId, waiting] of batch) {
      this.count(workspaceId, waiting.length).then(
        (res) => {
          const before = res.consumedPoints - waiting.length;
          waiting.forEach(({ limit, resolve }, i) => {
            const consumed = before + i + 1;
            resolve({ allowed: consumed <= limit, limit, remaining: Math.max(0, limit - consumed), resetMs: res.msBeforeNext });
          });
        },
        (error) => {
          for (const { reject } of waiting) reject(error);
        },
      );
    }
  }

  private async count(workspaceId: string, points: number): Promise<RateLimiterRes> {
    try {
      return await this.limiter.consume(workspaceId, points);
    } catch (error) {
      if (error instanceof RateLimiterRes) return error;
      throw new RateLimiterUnavailable(error instanceof Error ? error.message : String(error));
    }
  }
}

/** The outcome of one request's point: whether it may go on, and when the window ends (whole seconds, at least 1). */
export interface RatePoint {
  allowed: boolean;
  limit: number;
  retryAfter: number;
}

/**
 * Takes one point of the tenant's workspace and sets RateLimit-Limit, RateLimit-Remaining and
 * RateLimit-Reset (seconds). Redis unreachable: 503 rate_limiter_unavailable at once. The caller
 * decides what a refused point answers (rateLimit: 429; `/mcp`: a tool error for tools/call).
 */
export async function takeRatePoint(limiter: RateLimiter, res: Response): Promise<RatePoint> {
  const tenant = res.locals.tenant as Tenant;
  let decision: RateDecision;
  try {
    decision = await limiter.consume(tenant.workspace.id, tenant.workspace.rate_limit_per_minute);
  } catch (error) {
    if (error instanceof RateLimiterUnavailable) {
      throw new ApiError(
        'rate_limiter_unavailable',
        'The rate limiter is temporarily unavailable; retry with backoff.',
        {},
        { 'Retry-After': '1' },
      );
    }
    throw error;
  }
  const resetSeconds = Math.max(1, Math.ceil(decision.resetMs / 1000));
  res.setHeader('RateLimit-Limit', String(decision.limit));
  res.setHeader('RateLimit-Remaining', String(decision.remaining));
  res.setHeader('RateLimit-Reset', String(resetSeconds));
  return { allowed: decision.allowed, limit: decision.limit, retryAfter: resetSeconds };
}

/** 429 rate_limit_exceeded of a refused point, with Retry-After. */
export function rateLimitExceeded(point: RatePoint): ApiError {
  return new ApiError(
    'rate_limit_exceeded',
    `Rate limit of ${point.limit} requests per minute exceeded; retry in ${point.retryAfter} s.`,
    { limit: point.limit, retry_after: point.retryAfter },
    { 'Retry-After': String(point.retryAfter) },
  );
}

/**
 * Counts every authenticated request, before any database write. Sets RateLimit-Limit,
 * RateLimit-Remaining and RateLimit-Reset (seconds); a 429 adds Retry-After (whole seconds, at
 * least 1). Redis unreachable: 503 rate_limiter_unavailable at once, nothing written.
 */
export function rateLimit(limiter: RateLimiter): RequestHandler {
  return async (_req, res, next) => {
    const point = await takeRatePoint(limiter, res);
    if (!point.allowed) throw rateLimitExceeded(point);
    next();
  };
}
