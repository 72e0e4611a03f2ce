import type IORedis from 'ioredis';
import { RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import { ApiError } from '@sdx/domain';

/** Failed sign-ins allowed per email and per client address within the window (extensions.md 1). */
export const LOGIN_LIMITS = { perEmail: 10, perAddress: 100, windowSeconds: 15 * 60 } as const;

/**
 * Counts failed password checks per email and per client address over the shared Redis, so
 * every API process sees the same counts. An attempt takes a point from both before the
 * password is checked (so parallel guesses cannot slip past the limit); a success gives them
 * back (the email's count is cleared). Unknown emails are counted like known ones: a 429 says
 * nothing about whether an account exists.
 */
export class LoginLimiter {
  private readonly byEmail: RateLimiterRedis;
  private readonly byAddress: RateLimiterRedis;

  constructor(redis: IORedis, keyPrefix: string) {
    this.byEmail = new RateLimiterRedis({ storeClient: redis, keyPrefix: `${keyPrefix}:login:email`, points: LOGIN_LIMITS.perEmail, duration: LOGIN_LIMITS.windowSeconds });
    this.byAddress = new RateLimiterRedis({ storeClient: redis, keyPrefix: `${keyPrefix}:login:ip`, points: LOGIN_LIMITS.perAddress, duration: LOGIN_LIMITS.windowSeconds });
  }

  /** Takes one attempt from both counts; 429 rate_limit_exceeded with Retry-After when either is spent. */
  async attempt(email: string, address: string): Promise<void> {
    const results = await Promise.allSettled([this.byEmail.consume(email.toLowerCase()), this.byAddress.consume(address)]);
    let waitMs = 0;
    for (const result of results) {
      if (result.status === 'fulfilled') continue;
      if (result.reason instanceof RateLimiterRes) waitMs = Math.max(waitMs, result.reason.msBeforeNext);
      else throw new ApiError('rate_limiter_unavailable', 'The rate limiter is temporarily unavailable; retry with backoff.', {}, { 'Retry-After': '1' });
    }
    if (waitMs > 0) {
      const seconds = Math.max(1, Math.ceil(waitMs / 1000));
      throw new ApiError('rate_limit_exceeded', `Too many failed sign-ins; retry in ${seconds} s.`, { retry_after: seconds }, { 'Retry-After': String(seconds) });
    }
  }

  /** The password was right: the attempt does not count as a failure. */
  async succeeded(email: string, address: string): Promise<void> {
    await Promise.allSettled([this.byEmail.delete(email.toLowerCase()), this.byAddress.reward(address, 1)]);
  }
}
