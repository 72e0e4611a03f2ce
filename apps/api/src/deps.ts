import type { RedisClient } from '@sdx/queue';
import type { Services } from '@sdx/domain/api';
import type { ProviderRegistry } from '@sdx/providers';
import type { TaskWake } from '@sdx/runtime';
import type { LoginLimiter } from './middleware/login-limit';
import type { HeavyReads } from './middleware/heavy-reads';
import type { RateLimiter } from './middleware/rate-limit';
import type { LiveHub } from './live/hub';

/** What the routes of one API process share. */
export interface ApiDeps {
  services: Services;
  registry: ProviderRegistry;
  limiter: RateLimiter;
  redis: RedisClient;
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
  /**
   * The wake of the `mail` background task (packages/runtime/src/background), kicked by routes
   * after a commit that queued mail. When not given, createApp wakes the workers' task over
   * Redis (`wakeOverRedis`). Null: no wake (queued mail leaves at the task's next pass).
   */
  mailer?: TaskWake | null;
  /** The live-progress streams (one Redis subscriber); built by createApp when not given. */
  live?: LiveHub;
}

/** ApiDeps with everything createApp fills in. */
export interface AppDeps extends ApiDeps {
  loginLimiter: LoginLimiter;
  mailer: TaskWake | null;
  heavyReads: HeavyReads;
  live: LiveHub;
}
