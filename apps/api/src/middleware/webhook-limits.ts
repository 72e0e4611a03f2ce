import type { RedisClient } from '@sdx/queue';
import { RateLimiterRedis } from 'rate-limiter-flexible';
import { takePoint } from './take-point';

/**
 * Sends an admin asks for, per webhook and minute (extensions-2.md 2): test sends (10, the spec's
 * bound) and redeliveries (60: a redelivery repeats an event the webhook already took, and is how
 * a receiver catches up after an outage, so it gets room for that, but a loop of them cannot
 * aim the service at a URL either).
 */
export const WEBHOOK_SEND_LIMITS = { testsPerMinute: 10, redeliveriesPerMinute: 60 } as const;

/**
 * Counts them over the shared Redis (rate-limiter-flexible, as the sign-in limits), so every API
 * process sees the same counts. The key is the workspace and the webhook: a caller of another
 * workspace naming this webhook's ID spends nothing of its allowance (and gets 404).
 */
export class WebhookSendLimiter {
  private readonly tests: RateLimiterRedis;
  private readonly redeliveries: RateLimiterRedis;

  constructor(redis: RedisClient, keyPrefix: string) {
    this.tests = new RateLimiterRedis({
      storeClient: redis,
      keyPrefix: `${keyPrefix}:webhook:test`,
      points: WEBHOOK_SEND_LIMITS.testsPerMinute,
      duration: 60,
    });
    this.redeliveries = new RateLimiterRedis({
      storeClient: redis,
      keyPrefix: `${keyPrefix}:webhook:redeliver`,
      points: WEBHOOK_SEND_LIMITS.redeliveriesPerMinute,
      duration: 60,
    });
  }

  /** One test send; 429 rate_limit_exceeded with Retry-After past 10 a minute. */
  async testSend(workspaceId: string, webhookId: string): Promise<void> {
    await takePoint(
      this.tests,
      `${workspaceId}:${webhookId}`,
      `At most ${WEBHOOK_SEND_LIMITS.testsPerMinute} test sends a minute per webhook`,
    );
  }

  /** One redelivery; 429 rate_limit_exceeded with Retry-After past 60 a minute. */
  async redelivery(workspaceId: string, webhookId: string): Promise<void> {
    await takePoint(
      this.redeliveries,
      `${workspaceId}:${webhookId}`,
      `At most ${WEBHOOK_SEND_LIMITS.redeliveriesPerMinute} redeliveries a minute per webhook`,
    );
  }
}
