import type IORedis from 'ioredis';
import type { Services } from '@sdx/domain';
import type { ProviderRegistry } from '@sdx/providers';
import type { RateLimiter } from './middleware/rate-limit';

/** What the routes of one API process share. */
export interface ApiDeps {
  services: Services;
  registry: ProviderRegistry;
  limiter: RateLimiter;
  redis: IORedis;
  /** Aborted when the process starts shutting down: long waits (POST /v1/extract) answer at once. */
  draining?: AbortSignal;
}
