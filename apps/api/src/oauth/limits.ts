import type { RequestHandler } from 'express';
import type { RedisClient } from '@sdx/queue';
import { RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';

/**
 * Requests per client address to the OAuth endpoints anyone may call, over the shared Redis
 * (every API process sees the same counts), in place of the SDK's in-memory limiter (one count
 * per process, lost on restart). Registration is the strictest: each one writes a row.
 */
export const OAUTH_LIMITS = {
  register: { points: 20, duration: 3600 },
  authorize: { points: 100, duration: 900 },
  token: { points: 200, duration: 900 },
  revoke: { points: 100, duration: 900 },
} as const;

export type OAuthEndpoint = keyof typeof OAUTH_LIMITS;

/** One limiter per endpoint, built once per app. */
export class OAuthLimiter {
  private readonly limiters: Record<OAuthEndpoint, RateLimiterRedis>;

  constructor(redis: RedisClient, keyPrefix: string, limits: Record<OAuthEndpoint, { points: number; duration: number }> = OAUTH_LIMITS) {
    const make = (name: OAuthEndpoint) =>
      new RateLimiterRedis({ storeClient: redis, keyPrefix: `${keyPrefix}:oauth:${name}`, ...limits[name] });
    this.limiters = { register: make('register'), authorize: make('authorize'), token: make('token'), revoke: make('revoke') };
  }

  /**
   * Middleware taking one point per request (CORS preflights aside) from the client address: past the limit, 429 with
   * Retry-After and an RFC 6749-shaped body (`too_many_requests`, as the SDK's limiter says it);
   * Redis not answering, 503 `temporarily_unavailable`.
   */
  guard(endpoint: OAuthEndpoint): RequestHandler {
    return async (req, res, next) => {
      if (req.method === 'OPTIONS') {
        next();
        return;
      }
      try {
        await this.limiters[endpoint].consume(req.ip ?? 'unknown');
      } catch (reason) {
        if (!(reason instanceof RateLimiterRes)) {
          res.status(503).set('Retry-After', '1').json({
            error: 'temporarily_unavailable',
            error_description: 'The rate limiter is temporarily unavailable; retry with backoff.',
          });
          return;
        }
        const seconds = Math.max(1, Math.ceil(reason.msBeforeNext / 1000));
        res
          .status(429)
          .set('Retry-After', String(seconds))
          .json({
            error: 'too_many_requests',
            error_description: `Too many ${endpoint} requests from this address; retry in ${seconds} s.`,
          });
        return;
      }
      next();
    };
  }
}
