import type IORedis from 'ioredis';
import type { Services } from '@sdx/domain';
import type { ProviderRegistry } from '@sdx/providers';
import type { HeavyReads } from './middleware/heavy-reads';
import type { RateLimiter } from './middleware/rate-limit';

/** What the routes of one API process share. */
export interface ApiDeps {
  services: Services;
  registry: ProviderRegistry;
  limiter: RateLimiter;
  redis: IORedis;
  /** The per-workspace bound on heavy reads (built from the configuration when not given). */
  heavyReads: HeavyReads;
}
