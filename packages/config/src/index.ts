import pino, { type Logger, type LoggerOptions } from 'pino';
import { isUnavailableError } from './faults';

export { isUnavailableError, faultOf, OutageLog } from './faults';
export { isCredentialName, redactHeaders, redactUrl, REDACTED } from './redact';

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
    seedDemo: nodeEnv !== 'production' && env.SEED_DEMO !== '0',
  };
}

/** Paths that can carry secrets; pino replaces them with [Redacted]. */
export const REDACT_PATHS = [
  'req.headers["x-api-key"]',
  'req.headers.authorization',
  'req.headers["proxy-authorization"]',
  'req.headers.cookie',
  'headers["x-api-key"]',
  'headers.authorization',
  'headers["proxy-authorization"]',
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

const WARN = 40;

/**
 * A warning or error whose `err` is a dependency outage (isUnavailableError) is written at
 * debug: the process's OutageLog has already said, once, that the dependency is down, and a
 * line per failed request, attempt or loop turn would bury that under a flood.
 */
function demoteOutageFaults(this: Logger, args: Parameters<pino.LogFn>, method: pino.LogFn, level: number): void {
  const first = args[0] as unknown;
  if (level >= WARN && first && typeof first === 'object' && 'err' in first && isUnavailableError((first as { err: unknown }).err)) {
    if (this.isLevelEnabled('debug')) this.debug(...(args as [object, string?]));
    return;
  }
  method.apply(this, args);
}

export function createLogger(config: Pick<AppConfig, 'logLevel'>, options: LoggerOptions = {}, destination?: pino.DestinationStream): Logger {
  return pino(
    {
      level: config.logLevel,
      redact: { paths: REDACT_PATHS, censor: '[Redacted]' },
      hooks: { logMethod: demoteOutageFaults },
      ...options,
    },
    destination,
  );
}

export type { Logger };
