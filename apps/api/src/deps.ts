import type { RedisClient } from '@sdx/queue';
import type { MailSender, Services } from '@sdx/domain/api';
import type { ProviderRegistry } from '@sdx/providers';
import type { ProcessBilling } from '@sdx/runtime';
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
   * The process's mail sender (`startMailSender` of packages/runtime), kicked by routes after a commit that
   * queued mail; whoever passes it closes it. When not given, createApp starts one from SMTP_URL
   * and closes it when `draining` aborts. Null: this process sends no mail (queued mail still
   * leaves through the workers' senders).
   */
  mailer?: MailSender | null;
  /** The live-progress streams (one Redis subscriber); built by createApp when not given. */
  live?: LiveHub;
  /**
   * The process's auto-recharge charger (`startBilling` of packages/runtime);
   * whoever passes it closes it. When not given, createApp starts one from the configuration
   * and closes it when `draining` aborts.
   */
  billing?: ProcessBilling;
}

/** ApiDeps with everything createApp fills in. */
export interface AppDeps extends ApiDeps {
  loginLimiter: LoginLimiter;
  mailer: MailSender | null;
  heavyReads: HeavyReads;
  live: LiveHub;
  billing: ProcessBilling;
}
