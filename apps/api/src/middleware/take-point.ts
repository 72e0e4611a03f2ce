import { type RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import { ApiError } from '@sdx/domain/api';

/**
 * Takes one point of `key` from a Redis-backed limiter (sign-ups, mail requests, webhook test
 * sends and redeliveries): past the limit, 429 rate_limit_exceeded saying `what`, with
 * Retry-After; Redis not answering, 503 rate_limiter_unavailable.
 */
export async function takePoint(limiter: RateLimiterRedis, key: string, what: string): Promise<void> {
  try {
    await limiter.consume(key);
  } catch (reason) {
    if (!(reason instanceof RateLimiterRes))
      throw new ApiError(
        'rate_limiter_unavailable',
        'The rate limiter is temporarily unavailable; retry with backoff.',
        {},
        { 'Retry-After': '1' },
      );
    const seconds = Math.max(1, Math.ceil(reason.msBeforeNext / 1000));
    throw new ApiError(
      'rate_limit_exceeded',
      `${what}; retry in ${seconds} s.`,
      { retry_after: seconds },
      { 'Retry-After': String(seconds) },
    );
  }
}
