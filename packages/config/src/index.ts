import pino, { type Logger, type LoggerOptions } from 'pino';

/**
 * Runtime configuration, read once from the environment at process start and passed down
 * explicitly. Nothing else in the code reads process.env for these settings.
 */
export interface AppConfig {
  nodeEnv: string;
  port: number;
  databaseUrl: string;
  redisUrl: string;
  /** Prefix for BullMQ queues and other Redis keys, so several deployments or test files can share a Redis. */
  redisPrefix: string;
  logLevel: string;
  schedulerTickMs: number;
  jobRetryBaseMs: number;
  jobMaxAttempts: number;
  cacheTtlSeconds: number;
  syncTimeoutMs: number;
  sandboxLatencyMs: number;
  workerConcurrency: number;
  /** A running job whose heartbeat is older than this is considered abandoned. */
  heartbeatTimeoutMs: number;
  heartbeatIntervalMs: number;
  reconcileIntervalMs: number;
  /**
   * The deployment this process belongs to (DEPLOYMENT_ID, by default the REDIS_PREFIX): each job
   * records the deployment that admitted it, and a reconciler touches only its own deployment's.
   */
  deploymentId: string;
  /** A queued job's entry is re-added by the reconciler at most this often (its mark's age). */
  reconcileRecheckMs: number;
  /** Queue order: 'workspace' (round robin across workspaces, the default) or 'fifo'. */
  queueFairness: 'workspace' | 'fifo';
  /** Heavy reads (results of more than HEAVY_READ_MIN_ITEMS items, exports) one workspace may stream at once, per API process. */
  heavyReadsPerWorkspace: number;
  /** A read streaming more result items than this is a heavy read. */
  heavyReadMinItems: number;
  /** On SIGTERM, attempts a worker cannot finish within this are handed back to the queue. */
  workerShutdownGraceMs: number;
  /** Seed a demo workspace on first start against an empty database (never in production). */
  seedDemo: boolean;
}

function int(env: NodeJS.ProcessEnv, name: string, fallback: number, min = 0): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min) {
    throw new Error(`${name} must be an integer >= ${min}, got "${raw}"`);
  }
  return value;
}

function fairness(raw: string | undefined): 'workspace' | 'fifo' {
  if (raw === undefined || raw === '' || raw === 'workspace') return 'workspace';
  if (raw === 'fifo') return 'fifo';
  throw new Error(`QUEUE_FAIRNESS must be "workspace" or "fifo", got "${raw}"`);
}

export const DEFAULT_DATABASE_URL = 'postgres://postgres@127.0.0.1:5432/social_data';
export const DEFAULT_REDIS_URL = 'redis://127.0.0.1:6379/0';

export function loadConfig(env: NodeJS.ProcessEnv = process.env): AppConfig {
  const nodeEnv = env.NODE_ENV ?? 'development';
  return {
    nodeEnv,
    port: int(env, 'PORT', 3000),
    databaseUrl: env.DATABASE_URL || DEFAULT_DATABASE_URL,
    redisUrl: env.REDIS_URL || DEFAULT_REDIS_URL,
    redisPrefix: env.REDIS_PREFIX || 'sdx',
    logLevel: env.LOG_LEVEL || (nodeEnv === 'test' ? 'silent' : 'info'),
    schedulerTickMs: int(env, 'SCHEDULER_TICK_MS', 1000, 10),
    jobRetryBaseMs: int(env, 'JOB_RETRY_BASE_MS', 2000),
    jobMaxAttempts: int(env, 'JOB_MAX_ATTEMPTS', 4, 1),
    cacheTtlSeconds: int(env, 'CACHE_TTL_SECONDS', 3600),
    syncTimeoutMs: int(env, 'SYNC_TIMEOUT_MS', 30000, 1),
    sandboxLatencyMs: int(env, 'SANDBOX_LATENCY_MS', 0),
    workerConcurrency: int(env, 'WORKER_CONCURRENCY', 8, 1),
    heartbeatTimeoutMs: int(env, 'HEARTBEAT_TIMEOUT_MS', 30000, 100),
    heartbeatIntervalMs: int(env, 'HEARTBEAT_INTERVAL_MS', 1000, 10),
    reconcileIntervalMs: int(env, 'RECONCILE_INTERVAL_MS', 5000, 10),
    deploymentId: env.DEPLOYMENT_ID || env.REDIS_PREFIX || 'sdx',
    reconcileRecheckMs: int(env, 'RECONCILE_RECHECK_MS', 10000, 100),
    queueFairness: fairness(env.QUEUE_FAIRNESS),
    heavyReadsPerWorkspace: int(env, 'HEAVY_READS_PER_WORKSPACE', 2, 1),
    heavyReadMinItems: int(env, 'HEAVY_READ_MIN_ITEMS', 1000, 0),
    workerShutdownGraceMs: int(env, 'WORKER_SHUTDOWN_GRACE_MS', 10000, 0),
    seedDemo: nodeEnv !== 'production' && env.SEED_DEMO !== '0',
  };
}

/** Paths that can carry secrets; pino replaces them with [Redacted]. */
export const REDACT_PATHS = [
  'req.headers["x-api-key"]',
  'req.headers.authorization',
  'req.headers.cookie',
  'headers["x-api-key"]',
  'headers.authorization',
  'apiKey',
  'api_key',
  '*.apiKey',
  '*.api_key',
  'secret',
  '*.secret',
  'token',
  '*.token',
  'access_token',
  '*.access_token',
];

export function createLogger(config: Pick<AppConfig, 'logLevel'>, options: LoggerOptions = {}, destination?: pino.DestinationStream): Logger {
  return pino(
    {
      level: config.logLevel,
      redact: { paths: REDACT_PATHS, censor: '[Redacted]' },
      ...options,
    },
    destination,
  );
}

export type { Logger };
