import { isIPv6 } from 'node:net';
import type { RedisClient } from '@sdx/queue';
import { RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import { ApiError, normalizeEmail } from '@sdx/domain/api';
import { takePoint } from './take-point';

/** Failed sign-ins allowed per email and per client address within the window (extensions.md 1). */
export const LOGIN_LIMITS = { perEmail: 10, perAddress: 100, windowSeconds: 15 * 60 } as const;

/**
 * Requests that mail someone else than the caller (verification resends, password resets) per
 * client address an hour: each email gets at most 5 such mails an hour anyway, and this keeps one
 * address from mailing thousands of strangers from our domain.
 */
export const MAIL_REQUESTS_PER_ADDRESS_PER_HOUR = 20;

/**
 * The client address as the per-address limits count it (extensions-3.md 1): an IPv4 address as
 * it is (an IPv4-mapped IPv6 one too), an IPv6 address by its /64, the block one subscriber or
 * host is usually given, so walking through a /64 does not reset the counts. Anything else
 * (`unknown`) as it is.
 */
export function clientNetwork(address: string): string {
  const bare = address.replace(/^\[|\]$/g, '').split('%')[0];
  if (!isIPv6(bare)) return address;
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(bare);
  if (mapped) return mapped[1];
  const [head = '', tail = ''] = bare.toLowerCase().split('::');
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  // An embedded IPv4 tail (::1.2.3.4) is two groups; the /64 never reaches it unless the address has no ::.
  const groups = bare.includes('::') ? [...left, ...Array<string>(Math.max(0, 8 - left.length - right.length)).fill('0'), ...right] : left;
  return `${groups
    .slice(0, 4)
    .map((group) => (parseInt(group, 16) || 0).toString(16))
    .join(':')}::/64`;
}

/**
 * Counts failed password checks per email and per client address over the shared Redis, so
 * every API process sees the same counts. An attempt takes a point from both before the
 * password is checked (so parallel guesses cannot slip past the limit); a success gives them
 * back (the email's count is cleared). Unknown emails are counted like known ones: a 429 says
 * nothing about whether an account exists. Every per-address count takes IPv6 clients by their
 * /64 (`clientNetwork`).
 */
export class LoginLimiter {
  private readonly byEmail: RateLimiterRedis;
  private readonly byAddress: RateLimiterRedis;

  private readonly signUps: RateLimiterRedis;
  private readonly mailRequests: RateLimiterRedis;

  /**
   * `signUpsPerHour`: SIGNUP_LIMIT_PER_HOUR, sign-ups per client address an hour. `limits`: the
   * failed sign-ins allowed (LOGIN_LIMITS; only a test that is not about them passes others).
   */
  constructor(
    redis: RedisClient,
    keyPrefix: string,
    signUpsPerHour = 5,
    limits: { perEmail: number; perAddress: number; windowSeconds: number } = LOGIN_LIMITS,
  ) {
    this.byEmail = new RateLimiterRedis({
      storeClient: redis,
      keyPrefix: `${keyPrefix}:login:email`,
      points: limits.perEmail,
      duration: limits.windowSeconds,
    });
    this.byAddress = new RateLimiterRedis({
      storeClient: redis,
      keyPrefix: `${keyPrefix}:login:ip`,
      points: limits.perAddress,
      duration: limits.windowSeconds,
    });
    this.signUps = new RateLimiterRedis({
      storeClient: redis,
      keyPrefix: `${keyPrefix}:signup:ip`,
      points: signUpsPerHour,
      duration: 3600,
    });
    this.mailRequests = new RateLimiterRedis({
      storeClient: redis,
      keyPrefix: `${keyPrefix}:mailreq:ip`,
      points: MAIL_REQUESTS_PER_ADDRESS_PER_HOUR,
      duration: 3600,
    });
  }

  /** One sign-up from the client address; 429 rate_limit_exceeded with Retry-After past SIGNUP_LIMIT_PER_HOUR. */
  async signUp(address: string): Promise<void> {
    await takePoint(this.signUps, clientNetwork(address), 'Too many sign-ups from this address');
  }

  /** One request that mails an account's address (resend, reset) from the client address. */
  async mailRequest(address: string): Promise<void> {
    await takePoint(this.mailRequests, clientNetwork(address), 'Too many requests for mail from this address');
  }

  /** Takes one attempt from both counts; 429 rate_limit_exceeded with Retry-After when either is spent. */
  async attempt(email: string, address: string): Promise<void> {
    const results = await Promise.allSettled([this.byEmail.consume(normalizeEmail(email)), this.byAddress.consume(clientNetwork(address))]);
    let waitMs = 0;
    for (const result of results) {
      if (result.status === 'fulfilled') continue;
      if (result.reason instanceof RateLimiterRes) waitMs = Math.max(waitMs, result.reason.msBeforeNext);
      else
        throw new ApiError(
          'rate_limiter_unavailable',
          'The rate limiter is temporarily unavailable; retry with backoff.',
          {},
          { 'Retry-After': '1' },
        );
    }
    if (waitMs > 0) {
      const seconds = Math.max(1, Math.ceil(waitMs / 1000));
      throw new ApiError(
        'rate_limit_exceeded',
        `Too many failed sign-ins; retry in ${seconds} s.`,
        { retry_after: seconds },
        { 'Retry-After': String(seconds) },
      );
    }
  }

  /** The password was right: the attempt does not count as a failure. */
  async succeeded(email: string, address: string): Promise<void> {
    await Promise.allSettled([this.byEmail.delete(normalizeEmail(email)), this.byAddress.reward(clientNetwork(address), 1)]);
  }
}
