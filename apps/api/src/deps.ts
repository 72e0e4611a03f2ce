import type IORedis from 'ioredis';
import type { Services } from '@sdx/domain';
import type { ProviderRegistry } from '@sdx/providers';
import type { Mailer } from './mailer';
import type { LoginLimiter } from './middleware/login-limit';
import type { HeavyReads } from './middleware/heavy-reads';
import type { RateLimiter } from './middleware/rate-limit';
import type { LiveHub } from './live/hub';

/** What the routes of one API process share. */
export interface ApiDeps {
  services: Services;
  registry: ProviderRegistry;
  limiter: RateLimiter;
  redis: IORedis;
  /** Aborted when the process starts shutting down: long waits (POST /v1/extract) answer at once. */
  draining?: AbortSignal;
  /**
   * The bounds on heavy reads. When not given, createApp builds the per-workspace bound from the
   * configuration, and heavy reads use the services' pool (the API process passes
   * HeavyReads.fromConfig, with a pool of their own).
   */
  heavyReads?: HeavyReads;
  /** Built by createApp from `redis` when not given. */
  loginLimiter?: LoginLimiter;
  /** Built by createApp from SMTP_URL when not given; null mails nothing. */
  mailer?: Mailer | null;
  /** The live-progress streams (one Redis subscriber); built by createApp when not given. */
  live?: LiveHub;
}

/** ApiDeps with everything createApp fills in. */
export interface AppDeps extends ApiDeps {
  loginLimiter: LoginLimiter;
  mailer: Mailer | null;
  heavyReads: HeavyReads;
  live: LiveHub;
}
