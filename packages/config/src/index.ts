import { createHash } from 'node:crypto';
import { tmpdir } from 'node:os';
import path from 'node:path';
import v8 from 'node:v8';
import pino, { type Logger, type LoggerOptions } from 'pino';
import { isUnavailableError } from './faults';
import { parsePlans, type Plan } from './plans';

export { isUnavailableError, faultOf, OUTAGE_STRAGGLER_MS, OutageLog } from './faults';
export { isCredentialName, redactHeaders, redactUrl, REDACTED } from './redact';
export { defaultPlans, FREE_PLAN_ID, parsePlans, type Plan, type PlanLimits } from './plans';

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
  /**
   * A Redis Cluster's seed nodes (REDIS_CLUSTER_NODES, `host:port,host:port,…`): set, every Redis
   * use (queues, limiters, live progress) runs on that cluster, and REDIS_URL gives only its
   * credentials and TLS; empty, the one Redis of REDIS_URL.
   */
  redisClusterNodes: RedisNode[];
  /**
   * Where result pages are written (RESULT_STORE): `postgres` (default, in their rows) or `s3`
   * (compressed NDJSON objects in the bucket of `s3`, Postgres keeping only their metadata).
   */
  resultStore: 'postgres' | 's3';
  /** The result store's bucket (S3_*), when one is configured: needed by RESULT_STORE=s3, and to read pages written there. */
  s3: ResultBucket | null;
  logLevel: string;
  /** `pretty` (colored lines, for a terminal) or `json` (one object per line, for collectors). */
  logFormat: LogFormat;
  schedulerTickMs: number;
  /**
   * How often the scheduler runs the retention purge (expired results, idempotency records,
   * ended sessions); 0 turns it off. RETENTION_INTERVAL_MS, formerly IDEMPOTENCY_PURGE_INTERVAL_MS.
   */
  retentionIntervalMs: number;
  /** Results are deleted this many days after their job finished (RESULT_RETENTION_DAYS). */
  resultRetentionDays: number;
  /** Monitors' points are deleted this many days after they were observed (MONITOR_RETENTION_DAYS). */
  monitorRetentionDays: number;
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
   * The worker's reconciler recomputes the money's stored counters (month spend, reserved
   * totals, balances) from the reservations and the ledger this often (COUNTER_RECONCILE_INTERVAL_MS,
   * 10 minutes; 0 turns it off), and once at start (packages/domain/src/credits/counters.ts).
   */
  counterReconcileIntervalMs: number;
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
  /**
   * Connections of the API process's pool for heavy reads' slice queries: every heavy read of
   * the process, of any workspace, takes its turn on them (first come, first served), and none
   * takes a connection the other requests need.
   */
  heavyReadConnections: number;
  /**
   * The V8 heap bound (old space, MB) `npm start` gives each process it runs. Without one, V8
   * sizes it from the host's memory and lets garbage pile up far beyond what is live before it
   * collects (a streaming API's RSS then grows by hundreds of MB). Containers set theirs in
   * NODE_OPTIONS, sized to their memory limit.
   */
  maxHeapMb: number;
  /** How far V8 lets the API's heap grow past what it kept before it marks again (HEAP_GROWTH_PERCENT; 0: V8's own choice). */
  heapGrowthPercent: number;
  /** On SIGTERM, attempts a worker cannot finish within this are handed back to the queue. */
  workerShutdownGraceMs: number;
  /** Seed a demo workspace on first start against an empty database (never in production). */
  seedDemo: boolean;
  /** Plan allowance of a personal workspace, made by sign-up (NEW_WORKSPACE_CREDITS; given once the email is verified). */
  newWorkspaceCredits: number;
  /** SIGNUP_ENABLED=0 closes POST /v1/auth/signup. */
  signupEnabled: boolean;
  /** Where mail goes (SMTP_URL, a nodemailer URL); null: the dev outbox, or outside it nothing is mailed. */
  smtpUrl: string | null;
  /**
   * The local dev outbox (issue 52): outside production, without SMTP_URL, mail is written to
   * this folder instead (DEV_MAIL_DIR; by default one in the system's temporary folder, named
   * for the database and Redis prefix, so that the API and worker of one service share it) and
   * listed by GET /v1/dev/mail. Null in production and when SMTP_URL is set.
   */
  devMailDir: string | null;
  /** The From of every mail (MAIL_FROM; SMTP_FROM is read as its older name). */
  mailFrom: string;
  /** EMAIL_VERIFICATION: sign-up waits for the email to be verified (default on when SMTP_URL is set). */
  emailVerification: boolean;
  /** Sign-ups allowed per client address an hour (SIGNUP_LIMIT_PER_HOUR). */
  signupLimitPerHour: number;
  /** Team workspaces one user may own (MAX_TEAM_WORKSPACES_PER_USER). */
  maxTeamWorkspacesPerUser: number;
  /** Plan allowance of a team workspace made by POST /v1/workspaces (NEW_TEAM_WORKSPACE_CREDITS). */
  newTeamWorkspaceCredits: number;
  /** Webhooks one workspace may have (MAX_WEBHOOKS_PER_WORKSPACE). */
  maxWebhooksPerWorkspace: number;
  /** Event streams open at once per workspace (MAX_STREAMS_PER_WORKSPACE). */
  maxStreamsPerWorkspace: number;
  /** The key that seals secrets at rest (SECRETS_KEY, 32 bytes base64); null outside production only. */
  secretsKey: Buffer | null;
  /** The key being rotated away from (SECRETS_KEY_PREVIOUS): still opens what it sealed. */
  secretsKeyPrevious: Buffer | null;
  /** Base of links handed to people (an invitation's accept_url): APP_URL, else http://localhost:PORT. */
  appUrl: string;
  /** Express's `trust proxy` (TRUST_PROXY: a hop count, or addresses/subnets); null: the TCP peer is the client. */
  trustProxy: number | string | null;
  /** Port of the worker's and scheduler's /metrics, /healthz and /readyz; undefined serves none. */
  metricsPort: number | undefined;
  /** Token of the operators' pages (Bull Board at /admin/queues); undefined turns them off. */
  adminToken: string | undefined;
  /** Seconds before each retry of a failed webhook delivery (WEBHOOK_RETRY_SCHEDULE); after the last, the delivery has failed. */
  webhookRetrySchedule: number[];
  /** WEBHOOK_ALLOW_HTTP=1: webhook URLs may use http besides https. */
  webhookAllowHttp: boolean;
  /** WEBHOOK_ALLOW_PRIVATE_NETWORKS=1: webhook URLs may reach private and loopback addresses (tests and local development only). */
  webhookAllowPrivateNetworks: boolean;
  /** Webhook deliveries a worker process sends at once (WEBHOOK_CONCURRENCY); 0: this worker neither dispatches nor delivers. */
  webhookConcurrency: number;
  /** Browser origins (CORS_ORIGINS, a comma list) that may call the API with credentials; none by default. */
  corsOrigins: string[];
  /** Stripe (extensions-2.md 1): STRIPE_SECRET_KEY; null answers every billing write 503 billing_unavailable. */
  stripeSecretKey: string | null;
  /** STRIPE_WEBHOOK_SECRET: the signing secret of the webhook endpoint registered in Stripe. */
  stripeWebhookSecret: string | null;
  /** STRIPE_API_BASE: where Stripe API calls go (a loopback fake in tests and local development); null: Stripe's own. */
  stripeApiBase: string | null;
  /** CREDIT_PACKS: the packs on sale (JSON list of {id, credits, amount, currency}). */
  creditPacks: CreditPack[];
  /** PLANS: the monthly plans (extensions-3.md 2), `free` first and always present. */
  plans: Plan[];
  /** PLAN_GRACE_DAYS: how long a subscription whose invoice failed keeps its plan before the workspace falls to free (default 7). */
  planGraceDays: number;
  /** PLAN_GRACE_INTERVAL_MS: how often the scheduler looks for grace periods that ended (default 10 minutes). */
  planGraceIntervalMs: number;
  /** AUTO_RECHARGE_MAX_PER_MONTH: auto-recharge charges per workspace and UTC month; the next one due turns auto-recharge off (default 5). */
  autoRechargeMaxPerMonth: number;
  /** The most bytes of JSON one MCP tool result's text, and its structured content, may each hold (MCP_MAX_OUTPUT_BYTES). */
  mcpMaxOutputBytes: number;
}

/** A pack of credits on sale: `amount` in the currency's minor unit (cents), `currency` lower case ISO 4217. */
export interface CreditPack {
  id: string;
  credits: number;
  amount: number;
  currency: string;
}

export const DEFAULT_CREDIT_PACKS: readonly CreditPack[] = [
  { id: 'pack_10k', credits: 10000, amount: 1000, currency: 'usd' },
  { id: 'pack_100k', credits: 100000, amount: 9000, currency: 'usd' },
];

/** CREDIT_PACKS: a JSON list of packs, each checked; the default list when unset. */
export function parseCreditPacks(raw: string | undefined): CreditPack[] {
  if (raw === undefined || raw.trim() === '') return DEFAULT_CREDIT_PACKS.map((p) => ({ ...p }));
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    throw new Error('CREDIT_PACKS must be a JSON list of {id, credits, amount, currency}');
  }
  if (!Array.isArray(parsed) || parsed.length === 0)
    throw new Error('CREDIT_PACKS must be a non-empty JSON list of {id, credits, amount, currency}');
  const seen = new Set<string>();
  return parsed.map((entry: unknown, i) => {
    const p = entry as Partial<CreditPack> | null;
    const ok =
      p !== null &&
      typeof p === 'object' &&
      typeof p.id === 'string' &&
      /^[A-Za-z0-9_-]{1,64}$/.test(p.id) &&
      Number.isSafeInteger(p.credits) &&
      p.credits! > 0 &&
      Number.isSafeInteger(p.amount) &&
      p.amount! > 0 &&
      typeof p.currency === 'string' &&
      /^[a-zA-Z]{3}$/.test(p.currency);
    if (!ok)
      throw new Error(
        `CREDIT_PACKS[${i}] must be {id (letters, digits, _ or -), credits > 0, amount > 0 (minor unit), currency (3 letters)}`,
      );
    if (seen.has(p.id!)) throw new Error(`CREDIT_PACKS lists ${p.id} twice`);
    seen.add(p.id!);
    return { id: p.id!, credits: p.credits!, amount: p.amount!, currency: p.currency!.toLowerCase() };
  });
}

export type LogFormat = 'json' | 'pretty';

/**
 * LOG_FORMAT when set; otherwise pretty for a terminal outside production, JSON for everything
 * else (a container, a pipe, a file, any production process).
 */
export function logFormatFor(env: NodeJS.ProcessEnv, tty: boolean): LogFormat {
  const raw = env.LOG_FORMAT?.trim().toLowerCase();
  if (raw === 'json' || raw === 'pretty') return raw;
  if (raw) throw new Error(`LOG_FORMAT must be json or pretty, got "${env.LOG_FORMAT}"`);
  return tty && (env.NODE_ENV ?? 'development') !== 'production' ? 'pretty' : 'json';
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

function flag(env: NodeJS.ProcessEnv, name: string, fallback: boolean): boolean {
  const raw = env[name]?.trim().toLowerCase();
  if (raw === undefined || raw === '') return fallback;
  if (raw === '1' || raw === 'true') return true;
  if (raw === '0' || raw === 'false') return false;
  throw new Error(`${name} must be 1 or 0, got "${env[name]}"`);
}

/**
 * A 32-byte key given in base64. In production SECRETS_KEY is required: the service refuses to
 * start without it rather than keep webhook secrets under a key anyone can read in this source.
 */
export function secretsKey(env: NodeJS.ProcessEnv, name: string, required: boolean): Buffer | null {
  const raw = env[name]?.trim();
  if (!raw) {
    if (required) throw new Error(`${name} is required in production: 32 random bytes in base64 (openssl rand -base64 32)`);
    return null;
  }
  const key = Buffer.from(raw, 'base64');
  if (key.length !== 32 || key.toString('base64').replace(/=+$/, '') !== raw.replace(/=+$/, '')) {
    throw new Error(`${name} must be 32 bytes in base64 (openssl rand -base64 32)`);
  }
  return key;
}

/** The bucket of the object result store (S3_ENDPOINT, S3_BUCKET, S3_REGION, S3_ACCESS_KEY_ID, S3_SECRET_ACCESS_KEY, S3_FORCE_PATH_STYLE). */
export interface ResultBucket {
  endpoint: string | null;
  bucket: string;
  region: string;
  accessKeyId: string;
  secretAccessKey: string;
  forcePathStyle: boolean;
}

/** RESULT_STORE and the S3_* variables; RESULT_STORE=s3 without a bucket and its keys stops the process at start. */
export function resultStoreOf(env: NodeJS.ProcessEnv): { resultStore: 'postgres' | 's3'; s3: ResultBucket | null } {
  const raw = (env.RESULT_STORE ?? '').trim().toLowerCase() || 'postgres';
  if (raw !== 'postgres' && raw !== 's3') throw new Error(`RESULT_STORE must be "postgres" or "s3", got "${env.RESULT_STORE}"`);
  const bucket = env.S3_BUCKET?.trim();
  const s3: ResultBucket | null = bucket
    ? {
        endpoint: env.S3_ENDPOINT?.trim() || null,
        bucket,
        region: env.S3_REGION?.trim() || 'us-east-1',
        accessKeyId: env.S3_ACCESS_KEY_ID?.trim() ?? '',
        secretAccessKey: env.S3_SECRET_ACCESS_KEY?.trim() ?? '',
        forcePathStyle: flag(env, 'S3_FORCE_PATH_STYLE', false),
      }
    : null;
  if (raw === 's3' && (!s3 || !s3.accessKeyId || !s3.secretAccessKey)) {
    throw new Error(
      'RESULT_STORE=s3 needs S3_BUCKET, S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY (and S3_ENDPOINT for a store other than AWS)',
    );
  }
  return { resultStore: raw, s3 };
}

/** One node of a Redis Cluster, as REDIS_CLUSTER_NODES lists it. */
export interface RedisNode {
  host: string;
  port: number;
}

/**
 * REDIS_CLUSTER_NODES: `host:port` entries separated by commas (an IPv6 host in brackets,
 * `[::1]:7000`); empty or unset, no cluster. Any other value stops the process at start.
 */
export function parseRedisClusterNodes(raw: string | undefined): RedisNode[] {
  if (!raw || raw.trim() === '') return [];
  const nodes: RedisNode[] = [];
  for (const entry of raw.split(',').map((part) => part.trim())) {
    const match = /^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9._-]+):(\d{1,5})$/.exec(entry);
    const port = match ? Number(match[2]) : 0;
    if (!match || port < 1 || port > 65535) {
      throw new Error(`REDIS_CLUSTER_NODES must be a comma list of host:port (such as redis-1:6379,redis-2:6379), got "${raw}"`);
    }
    nodes.push({ host: match[1].replace(/^\[(.*)\]$/, '$1'), port });
  }
  return nodes;
}

export const DEFAULT_DATABASE_URL = 'postgres://postgres@127.0.0.1:5432/social_data';
export const DEFAULT_REDIS_URL = 'redis://127.0.0.1:6379/0';

/** Whether mail leaves this service at all: through SMTP_URL, or into the local dev outbox. */
export function sendsMail(config: Pick<AppConfig, 'smtpUrl' | 'devMailDir'>): boolean {
  return Boolean(config.smtpUrl || config.devMailDir);
}

/** The dev outbox's folder (AppConfig.devMailDir): null in production or with SMTP_URL. */
function devMailDirOf(env: NodeJS.ProcessEnv, nodeEnv: string): string | null {
  if (nodeEnv === 'production' || env.SMTP_URL) return null;
  if (env.DEV_MAIL_DIR) return path.resolve(env.DEV_MAIL_DIR);
  const service = createHash('sha256')
    .update(`${env.DATABASE_URL || DEFAULT_DATABASE_URL}\n${env.REDIS_PREFIX || 'sdx'}`)
    .digest('hex')
    .slice(0, 16);
  return path.join(tmpdir(), 'sdx-dev-mail', service);
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env, tty: boolean = Boolean(process.stdout.isTTY)): AppConfig {
  const nodeEnv = env.NODE_ENV ?? 'development';
  if (flag(env, 'EMAIL_VERIFICATION', false) && !env.SMTP_URL && nodeEnv === 'production') {
    throw new Error('EMAIL_VERIFICATION=1 needs SMTP_URL: nobody could receive the verification link');
  }
  return {
    nodeEnv,
    port: int(env, 'PORT', 3000),
    databaseUrl: env.DATABASE_URL || DEFAULT_DATABASE_URL,
    redisUrl: env.REDIS_URL || DEFAULT_REDIS_URL,
    redisPrefix: env.REDIS_PREFIX || 'sdx',
    redisClusterNodes: parseRedisClusterNodes(env.REDIS_CLUSTER_NODES),
    ...resultStoreOf(env),
    logLevel: env.LOG_LEVEL || (nodeEnv === 'test' ? 'silent' : 'info'),
    logFormat: logFormatFor(env, tty),
    schedulerTickMs: int(env, 'SCHEDULER_TICK_MS', 1000, 10),
    retentionIntervalMs: int(env, 'RETENTION_INTERVAL_MS', int(env, 'IDEMPOTENCY_PURGE_INTERVAL_MS', 3_600_000)),
    resultRetentionDays: int(env, 'RESULT_RETENTION_DAYS', 30, 1),
    monitorRetentionDays: int(env, 'MONITOR_RETENTION_DAYS', 400, 1),
    jobRetryBaseMs: int(env, 'JOB_RETRY_BASE_MS', 2000),
    jobMaxAttempts: int(env, 'JOB_MAX_ATTEMPTS', 4, 1),
    cacheTtlSeconds: int(env, 'CACHE_TTL_SECONDS', 3600),
    syncTimeoutMs: int(env, 'SYNC_TIMEOUT_MS', 30000, 1),
    sandboxLatencyMs: int(env, 'SANDBOX_LATENCY_MS', 0),
    workerConcurrency: int(env, 'WORKER_CONCURRENCY', 8, 1),
    heartbeatTimeoutMs: int(env, 'HEARTBEAT_TIMEOUT_MS', 30000, 100),
    heartbeatIntervalMs: int(env, 'HEARTBEAT_INTERVAL_MS', 1000, 10),
    reconcileIntervalMs: int(env, 'RECONCILE_INTERVAL_MS', 5000, 10),
    counterReconcileIntervalMs: int(env, 'COUNTER_RECONCILE_INTERVAL_MS', 600_000, 0),
    deploymentId: env.DEPLOYMENT_ID || env.REDIS_PREFIX || 'sdx',
    reconcileRecheckMs: int(env, 'RECONCILE_RECHECK_MS', 10000, 100),
    queueFairness: fairness(env.QUEUE_FAIRNESS),
    heavyReadsPerWorkspace: int(env, 'HEAVY_READS_PER_WORKSPACE', 2, 1),
    heavyReadMinItems: int(env, 'HEAVY_READ_MIN_ITEMS', 1000, 0),
    heavyReadConnections: int(env, 'HEAVY_READ_CONNECTIONS', 1, 1),
    maxHeapMb: int(env, 'MAX_HEAP_MB', 1024, 64),
    heapGrowthPercent: int(env, 'HEAP_GROWTH_PERCENT', 100, 0),
    workerShutdownGraceMs: int(env, 'WORKER_SHUTDOWN_GRACE_MS', 10000, 0),
    seedDemo: nodeEnv !== 'production' && env.SEED_DEMO !== '0',
    newWorkspaceCredits: int(env, 'NEW_WORKSPACE_CREDITS', 1000),
    signupEnabled: env.SIGNUP_ENABLED !== '0' && env.SIGNUP_ENABLED !== 'false',
    smtpUrl: env.SMTP_URL || null,
    devMailDir: devMailDirOf(env, nodeEnv),
    mailFrom: env.MAIL_FROM || env.SMTP_FROM || 'no-reply@localhost',
    emailVerification: flag(env, 'EMAIL_VERIFICATION', Boolean(env.SMTP_URL)),
    signupLimitPerHour: int(env, 'SIGNUP_LIMIT_PER_HOUR', 5, 1),
    maxTeamWorkspacesPerUser: int(env, 'MAX_TEAM_WORKSPACES_PER_USER', 5),
    newTeamWorkspaceCredits: int(env, 'NEW_TEAM_WORKSPACE_CREDITS', 0),
    maxWebhooksPerWorkspace: int(env, 'MAX_WEBHOOKS_PER_WORKSPACE', 20),
    maxStreamsPerWorkspace: int(env, 'MAX_STREAMS_PER_WORKSPACE', 50, 1),
    secretsKey: secretsKey(env, 'SECRETS_KEY', nodeEnv === 'production'),
    secretsKeyPrevious: secretsKey(env, 'SECRETS_KEY_PREVIOUS', false),
    trustProxy: !env.TRUST_PROXY ? null : /^\d+$/.test(env.TRUST_PROXY) ? Number(env.TRUST_PROXY) : env.TRUST_PROXY,
    appUrl: (env.APP_URL || `http://localhost:${int(env, 'PORT', 3000)}`).replace(/\/+$/, ''),
    metricsPort: env.METRICS_PORT ? int(env, 'METRICS_PORT', 0, 1) : undefined,
    adminToken: adminToken(env.ADMIN_TOKEN),
    webhookRetrySchedule: parseRetrySchedule(env.WEBHOOK_RETRY_SCHEDULE),
    webhookAllowHttp: env.WEBHOOK_ALLOW_HTTP === '1' || env.WEBHOOK_ALLOW_HTTP === 'true',
    webhookAllowPrivateNetworks: env.WEBHOOK_ALLOW_PRIVATE_NETWORKS === '1' || env.WEBHOOK_ALLOW_PRIVATE_NETWORKS === 'true',
    webhookConcurrency: int(env, 'WEBHOOK_CONCURRENCY', 128),
    corsOrigins: corsOrigins(env.CORS_ORIGINS),
    stripeSecretKey: env.STRIPE_SECRET_KEY || null,
    stripeWebhookSecret: env.STRIPE_WEBHOOK_SECRET || null,
    stripeApiBase: env.STRIPE_API_BASE ? env.STRIPE_API_BASE.replace(/\/+$/, '') : null,
    creditPacks: parseCreditPacks(env.CREDIT_PACKS),
    plans: parsePlans(env.PLANS, int(env, 'NEW_WORKSPACE_CREDITS', 1000)),
    planGraceDays: int(env, 'PLAN_GRACE_DAYS', 7),
    planGraceIntervalMs: int(env, 'PLAN_GRACE_INTERVAL_MS', 600_000, 1000),
    autoRechargeMaxPerMonth: int(env, 'AUTO_RECHARGE_MAX_PER_MONTH', 5, 0),
    mcpMaxOutputBytes: int(env, 'MCP_MAX_OUTPUT_BYTES', 50_000, 2_000),
  };
}

/**
 * When a failed webhook delivery is tried again (extensions.md 5): about 5 s, 5 min, 30 min, 2 h,
 * 5 h, 10 h and 10 h after each failed attempt; then the delivery has failed.
 */
export const DEFAULT_WEBHOOK_RETRY_SCHEDULE: readonly number[] = [5, 300, 1800, 7200, 18000, 36000, 36000];

/** WEBHOOK_RETRY_SCHEDULE: a comma list of seconds (decimals allowed, e.g. `0.2,0.2` in tests); the default when unset. */
export function parseRetrySchedule(raw: string | undefined): number[] {
  if (raw === undefined || raw.trim() === '') return [...DEFAULT_WEBHOOK_RETRY_SCHEDULE];
  const values = raw.split(',').map((part) => part.trim());
  if (values.some((v) => v === '' || !Number.isFinite(Number(v)) || Number(v) < 0)) {
    throw new Error(`WEBHOOK_RETRY_SCHEDULE must be a comma list of seconds (numbers >= 0), got "${raw}"`);
  }
  return values.map(Number);
}

/**
 * CORS_ORIGINS: `https://app.example.com,http://localhost:5173`. Each entry must be an origin
 * (scheme, host, optional port; a trailing slash is dropped). `*` is refused: these origins call
 * with credentials, and a browser's cookie must not be usable from any site.
 */
export function corsOrigins(raw: string | undefined): string[] {
  const entries = (raw ?? '')
    .split(',')
    .map((entry) => entry.trim().replace(/\/+$/, ''))
    .filter(Boolean);
  for (const entry of entries) {
    let origin: string | undefined;
    try {
      origin = new URL(entry).origin;
    } catch {
      origin = undefined;
    }
    if (origin !== entry.toLowerCase() || entry.includes('*') || !/^https?:$/.test(new URL(entry).protocol)) {
      throw new Error(`CORS_ORIGINS lists origins such as https://app.example.com (no path, no wildcard); got "${entry}"`);
    }
  }
  return [...new Set(entries.map((entry) => entry.toLowerCase()))];
}

/** An admin token shorter than this is refused: it guards every queue of every tenant. */
export const ADMIN_TOKEN_MIN_LENGTH = 24;

function adminToken(raw: string | undefined): string | undefined {
  const token = raw?.trim();
  if (!token) return undefined;
  if (token.length < ADMIN_TOKEN_MIN_LENGTH) throw new Error(`ADMIN_TOKEN must be at least ${ADMIN_TOKEN_MIN_LENGTH} characters`);
  return token;
}

/**
 * The PROVIDER_MODE the provider selection sees. Outside production an unset mode lets the
 * selection pick (the sandbox when no upstream credentials are set). In production the sandbox
 * is never picked by default: an unset mode means `live`, and the sandbox runs only where
 * PROVIDER_MODE names it.
 */
export function resolveProviderMode(nodeEnv: string, raw: string | undefined): string | undefined {
  const mode = raw?.trim();
  if (mode) return mode;
  return nodeEnv === 'production' ? 'live' : undefined;
}

/**
 * Whether sign-up hands out unproven emails' accounts: production, sign-up open, and email
 * verification off (extensions-3.md 1). Such sign-ups get no credits (`signUpCredits`), and every
 * process says so once at start (`unverifiedSignUpWarning`).
 */
function unverifiedProductionSignUps(config: Pick<AppConfig, 'nodeEnv' | 'signupEnabled' | 'emailVerification'>): boolean {
  return config.nodeEnv === 'production' && config.signupEnabled && !config.emailVerification;
}

/** The plan allowance of a personal workspace made by a sign-up that needs no verification: NEW_WORKSPACE_CREDITS, but 0 in production. */
export function signUpCredits(config: Pick<AppConfig, 'nodeEnv' | 'signupEnabled' | 'emailVerification' | 'newWorkspaceCredits'>): number {
  return unverifiedProductionSignUps(config) ? 0 : config.newWorkspaceCredits;
}

/** The warning a production process logs at start when anyone may sign up with an email nobody verifies, or undefined. */
export function unverifiedSignUpWarning(
  config: Pick<AppConfig, 'nodeEnv' | 'signupEnabled' | 'emailVerification' | 'newWorkspaceCredits'>,
): string | undefined {
  if (!unverifiedProductionSignUps(config)) return undefined;
  return (
    'SIGN-UP WITHOUT EMAIL VERIFICATION IN PRODUCTION: anyone may sign up with any email (EMAIL_VERIFICATION=0 or no SMTP_URL). ' +
    `New personal workspaces get 0 credits instead of NEW_WORKSPACE_CREDITS (${config.newWorkspaceCredits}). ` +
    'Set SMTP_URL (and EMAIL_VERIFICATION=1), or SIGNUP_ENABLED=0.'
  );
}

/**
 * The warning a production process logs when the sandbox serves any platform, or undefined.
 * `platforms` maps each platform to what serves it (live, sandbox or off).
 */
export function sandboxWarning(nodeEnv: string, platforms: Record<string, string>): string | undefined {
  if (nodeEnv !== 'production') return undefined;
  const sandboxed = Object.keys(platforms).filter((platform) => platforms[platform] === 'sandbox');
  if (sandboxed.length === 0) return undefined;
  return (
    `SANDBOX IN PRODUCTION: PROVIDER_MODE makes the sandbox serve ${sandboxed.join(', ')}. ` +
    'Every result of these platforms is synthetic data, billed as real. Set PROVIDER_MODE=live ' +
    '(or name each platform live or off) unless this deployment is a demo.'
  );
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
  'password',
  '*.password',
  '*.current_password',
  '*.new_password',
  'csrf_token',
  '*.csrf_token',
  'req.headers["x-csrf-token"]',
  'res.headers["set-cookie"]',
];

const WARN = 40;

/**
 * A warning or error whose `err` is a dependency outage (isUnavailableError) is written at
 * debug: the process's OutageLog has already said, once, that the dependency is down, and a
 * line per failed request, attempt or loop turn would bury that under a flood.
 */
function demoteOutageFaults(this: Logger, args: Parameters<pino.LogFn>, method: pino.LogFn, level: number): void {
  const first = args[0];
  if (level >= WARN && first && typeof first === 'object' && 'err' in first && isUnavailableError(first.err)) {
    if (this.isLevelEnabled('debug')) this.debug(...(args as [object, string?]));
    return;
  }
  method.apply(this, args);
}

type PrettyFactory = (options: Record<string, unknown>) => pino.DestinationStream;

/** pino-pretty, a development dependency: absent from a production install, where logs are JSON. */
function loadPretty(): PrettyFactory | undefined {
  try {
    return require('pino-pretty') as PrettyFactory;
  } catch {
    return undefined;
  }
}

/**
 * The process logger. Secrets at REDACT_PATHS are replaced before a line is formatted, in both
 * formats. Without `logFormat`, lines to a given destination are JSON, and lines to stdout take
 * what logFormatFor says for this process's environment.
 */
export function createLogger(
  config: Pick<AppConfig, 'logLevel'> & Partial<Pick<AppConfig, 'logFormat'>>,
  options: LoggerOptions = {},
  destination?: pino.DestinationStream,
): Logger {
  const format = config.logFormat ?? (destination ? 'json' : logFormatFor(process.env, Boolean(process.stdout.isTTY)));
  const pretty = format === 'pretty' ? loadPretty() : undefined;
  const stream = pretty
    ? pretty({
        colorize: destination === undefined,
        translateTime: 'SYS:HH:MM:ss.l',
        ignore: 'pid,hostname',
        sync: true,
        ...(destination ? { destination } : {}),
      })
    : destination;
  return pino(
    {
      level: config.logLevel,
      redact: { paths: REDACT_PATHS, censor: '[Redacted]' },
      hooks: { logMethod: demoteOutageFaults },
      ...options,
    },
    stream,
  );
}

export type { Logger };

/**
 * Sets how far V8 lets this process's old generation grow past what its last full collection
 * kept before it starts marking again (HEAP_GROWTH_PERCENT). V8 sizes that step by itself,
 * and for an API process that streams large results it chooses a small one: the slices
 * promoted out of the young generation then start a full collection every few hundred
 * milliseconds, and the marking steps and pauses of each delay every other request in the
 * process by up to 15 ms (bench/heavy-reads.ts). 100 % (a step as large as what was kept)
 * makes them several times rarer for a few tens of MB more heap, still within MAX_HEAP_MB.
 * Set at run time, so it holds however the process is started. 0 leaves V8's choice.
 */
export function applyHeapGrowth(config: Pick<AppConfig, 'heapGrowthPercent'>): void {
  if (config.heapGrowthPercent > 0) v8.setFlagsFromString(`--heap-growing-percent=${config.heapGrowthPercent}`);
}

/** The node options a process of the service is started with: its heap bound (MAX_HEAP_MB). */
export function nodeHeapArgs(config: Pick<AppConfig, 'maxHeapMb'>): string[] {
  return [`--max-old-space-size=${config.maxHeapMb}`];
}
