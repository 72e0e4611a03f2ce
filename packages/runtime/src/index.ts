import { sql } from 'kysely';
import { addSourceHealthSource, collectProcessMetrics, type MetricsServer, startMetricsServer } from '@sdx/metrics';
import {
  type AppConfig,
  createLogger,
  type Logger,
  OutageLog,
  resolveProviderMode,
  sandboxWarning,
  unverifiedSignUpWarning,
} from '@sdx/config';
import { createDb, type Db } from '@sdx/db';
import {
  BucketResultObjects,
  type Clock,
  GroupAdmissions,
  GroupDeliveryAttempts,
  GroupJobClaims,
  GroupJobCompletions,
  GroupKeyLookups,
  LocalSignal,
  type Resources,
  sealerOf,
  SourceHealthGate,
  sourceHealthSamples,
  type Services,
  systemClock,
} from '@sdx/domain/runtime';
import { createStripeGateway } from '@sdx/payments';
import {
  createProviderRegistry,
  createSandboxProvider,
  type Provider,
  type ProviderRegistry,
  selectProviders,
  type SourceGate,
} from '@sdx/providers';
import { createFastRedis, ExtractionQueues, type RedisClient, RedisLivePublisher } from '@sdx/queue';
import { type Resolver, WebhookSender } from '@sdx/webhooks';

/**
 * Wires one process: configuration → Postgres pool, Redis connections, queues, provider
 * registry and the Services every domain function takes. Built once at start, closed on exit.
 */
export interface Runtime {
  config: AppConfig;
  log: Logger;
  db: Db;
  /** Fail-fast connection for request paths (rate limiter, queue producers). */
  redis: RedisClient;
  queues: ExtractionQueues;
  registry: ProviderRegistry;
  services: Services;
  close(): Promise<void>;
}

export interface RuntimeOptions {
  name: string;
  log?: Logger;
  clock?: Clock;
  /** Providers to use instead of those chosen from the environment (tests). */
  providers?: Provider[];
  dbPoolSize?: number;
  /** The environment providers are chosen from (PROVIDER_MODE, upstream credentials); process.env by default. */
  env?: NodeJS.ProcessEnv;
  /** How webhook hosts are resolved (tests give a fake DNS); the system's resolver otherwise. */
  webhookResolver?: Resolver;
}

/**
 * The sandbox unless upstream credentials (or PROVIDER_MODE) select live adapters; see
 * docs/providers.md. In production the sandbox runs only where PROVIDER_MODE names it, with a
 * loud warning (resolveProviderMode, sandboxWarning).
 */
export function chooseProviders(config: AppConfig, log: Logger, env: NodeJS.ProcessEnv = process.env, gate?: SourceGate): Provider[] {
  const mode = resolveProviderMode(config.nodeEnv, env.PROVIDER_MODE);
  const selection = selectProviders(
    { ...env, PROVIDER_MODE: mode },
    { sandbox: createSandboxProvider({ latencyMs: config.sandboxLatencyMs }), ...(gate ? { gate } : {}) },
  );
  const loud = sandboxWarning(config.nodeEnv, selection.platforms);
  if (loud) log.warn({ provider_mode: mode, platforms: selection.platforms }, loud);
  for (const warning of selection.warnings) log.warn(warning);
  log.info({ mode: selection.mode, platforms: selection.platforms }, 'providers selected');
  return selection.providers;
}

/**
 * Resolves once a runtime's Redis connection is ready; rejects after `timeoutMs`. Its clients
 * do not queue commands while offline, so work started before then (a request, a bench's first
 * add) meets a Redis that looks down.
 */
export function untilRedisReady(runtime: Pick<Runtime, 'redis'>, timeoutMs = 10_000): Promise<void> {
  const { redis } = runtime;
  if (redis.status === 'ready') return Promise.resolve();
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      redis.off('ready', ready);
      reject(new Error(`Redis was not ready within ${timeoutMs} ms (status ${redis.status})`));
    }, timeoutMs);
    const ready = () => {
      clearTimeout(timer);
      resolve();
    };
    redis.once('ready', ready);
  });
}

/**
 * Resolves once Postgres answers `select 1` and Redis answers PING, trying every `intervalMs`
 * for as long as it takes (the orchestrator's probes, not this, decide when a start took too
 * long). A process says it is ready (the API opens its port and logs `api listening`, the worker
 * and scheduler log their start) only after it: a request sent to a process that says so never
 * meets a Redis that is still connecting (503 rate_limiter_unavailable) or a pool with no
 * connection. Waiting past `warnAfterMs` is logged once, with what does not answer yet.
 */
export async function untilDependenciesReady(
  runtime: Pick<Runtime, 'db' | 'redis' | 'log'>,
  options: { intervalMs?: number; warnAfterMs?: number } = {},
): Promise<void> {
  const intervalMs = options.intervalMs ?? 100;
  const warnAfterMs = options.warnAfterMs ?? 5_000;
  const started = Date.now();
  let warned = false;
  const answers = async (check: () => Promise<unknown>) => {
    try {
      await Promise.race([check(), new Promise((_, reject) => setTimeout(() => reject(new Error('timeout')), 1_000).unref())]);
      return true;
    } catch {
      return false;
    }
  };
  for (;;) {
    const [postgres, redis] = await Promise.all([answers(() => sql`select 1`.execute(runtime.db)), answers(() => runtime.redis.ping())]);
    if (postgres && redis) return;
    if (!warned && Date.now() - started > warnAfterMs) {
      warned = true;
      runtime.log.warn(
        { postgres: postgres ? 'ok' : 'waiting', redis: redis ? 'ok' : 'waiting' },
        'waiting for postgres and redis before reporting ready',
      );
    }
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

export function createRuntime(config: AppConfig, options: RuntimeOptions): Runtime {
  // The sealer first: in production it refuses the public development key as SECRETS_KEY or SECRETS_KEY_PREVIOUS, before anything starts.
  sealerOf(config);
  const log = options.log ?? createLogger(config, { name: options.name });
  const unverified = unverifiedSignUpWarning(config);
  if (unverified) log.warn({ signup_enabled: config.signupEnabled, email_verification: config.emailVerification }, unverified);
  // Each dependency's outage is one warning when it starts and one when it ends.
  const postgresOutage = new OutageLog(log, 'postgres');
  const db = createDb({
    connectionString: config.databaseUrl,
    max: options.dbPoolSize ?? 10,
    applicationName: options.name,
    availability: postgresOutage,
  });
  const redis = createFastRedis({ url: config.redisUrl, clusterNodes: config.redisClusterNodes });
  const redisOutage = new OutageLog(log, 'redis');
  redis.on('error', (err: Error) => {
    redisOutage.failed(err);
    log.debug({ err: err.message }, 'redis connection error');
  });
  redis.on('ready', () => redisOutage.succeeded());
  const clock = options.clock ?? systemClock;
  const queues = new ExtractionQueues(redis, config.redisPrefix, config.queueFairness, {
    deployment: config.deploymentId,
    now: () => clock.now(),
  });
  // Live sources marked down (source health, shared through Postgres) are skipped by fallback chains.
  const registry = createProviderRegistry(options.providers ?? chooseProviders(config, log, options.env, new SourceHealthGate(db)));
  // The sdx_source_* gauges, where some live source serves (the sandbox alone reads nothing).
  const removeHealthSource = registry.hasLiveSources() ? addSourceHealthSource(() => sourceHealthSamples(db)) : () => undefined;
  const webhooks = new WebhookSender({
    allowHttp: config.webhookAllowHttp,
    allowPrivate: config.webhookAllowPrivateNetworks,
    resolve: options.webhookResolver,
  });
  const resultObjects = config.s3 ? BucketResultObjects.of(config.s3) : null;
  const resources: Resources = {
    db,
    queues,
    gate: registry,
    config,
    clock,
    log,
    webhooks,
    live: new RedisLivePublisher(redis, config.redisPrefix, log),
    outbox: new LocalSignal(),
    // The result bucket, when one is configured (RESULT_STORE=s3 writes there; pages there are read whatever the setting).
    resultObjects: resultObjects ?? undefined,
    // The payment gateway over Stripe, when STRIPE_SECRET_KEY and STRIPE_WEBHOOK_SECRET are set (billing writes answer 503 without it).
    payments: createStripeGateway(config) ?? undefined,
  };
  const services: Services = { ...resources, ...processServices(resources) };
  return {
    config,
    log,
    db,
    redis,
    queues,
    registry,
    services,
    async close() {
      removeHealthSource();
      webhooks.close();
      resultObjects?.close();
      await queues.close().catch(() => undefined);
      redis.disconnect();
      await db.destroy();
    },
  };
}

/**
 * The process's services, each built from the resources by the domain module whose SQL it runs:
 * admissions and key lookups answer requests, and are bounded (past the bounds, a 503 rather than
 * a queue without end); claims, completions and webhook delivery attempts come from the worker's
 * slots, which bound them already.
 */
export function processServices(resources: Resources): Pick<Services, 'admissions' | 'claims' | 'completions' | 'keys' | 'deliveries'> {
  return {
    admissions: new GroupAdmissions(resources),
    claims: new GroupJobClaims(resources),
    completions: new GroupJobCompletions(resources),
    keys: new GroupKeyLookups(resources.db),
    deliveries: new GroupDeliveryAttempts(resources.db),
  };
}

/**
 * The process metrics and, with METRICS_PORT set, the port serving /metrics, /healthz and
 * /readyz for Prometheus and the orchestrator's probes (worker and scheduler; the API serves
 * /metrics itself). Readiness checks Postgres and Redis.
 */
export async function startProcessMetrics(runtime: Runtime): Promise<MetricsServer | undefined> {
  collectProcessMetrics();
  if (!runtime.config.metricsPort) return undefined;
  const metrics = await startMetricsServer({
    port: runtime.config.metricsPort,
    checks: { postgres: () => sql`select 1`.execute(runtime.db), redis: () => runtime.redis.ping() },
  });
  runtime.log.info({ port: metrics.port }, 'metrics listening');
  return metrics;
}

/**
 * Graceful shutdown for a process: on SIGTERM or SIGINT, run `stop` once, then exit 0; exit 1
 * if it has not finished within `graceMs` (work still running is recovered elsewhere).
 */
export function onShutdown(log: Logger, name: string, stop: () => Promise<void>, graceMs = 15_000): void {
  let stopping = false;
  const handle = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, `${name} shutting down`);
    setTimeout(() => process.exit(1), graceMs).unref();
    stop()
      .then(() => process.exit(0))
      .catch((err) => {
        log.error({ err }, `${name} did not shut down cleanly`);
        process.exit(1);
      });
  };
  process.on('SIGTERM', handle);
  process.on('SIGINT', handle);
}
export { mailTransportOf } from './mail';
export { CATALOG, catalogTable, taskNamed, tasksOf } from './background/catalog';
export { BackgroundRunner, type RunnerOptions } from './background/runner';
export { leaseKey, RedisLease } from './background/lease';
export { type TaskWake, wakeChannel, wakeOverRedis } from './background/wake';
export { PER_WEBHOOK_IN_FLIGHT, WebhookLanes } from './background/consumers';
export {
  periodic,
  type BackgroundTask,
  type LeasePolicy,
  type PeriodicTask,
  type ProcessName,
  type QueueTask,
  type RetryPolicy,
  type TaskContext,
} from './background/task';
