import { randomBytes } from 'node:crypto';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import pg from 'pg';
import request from 'supertest';
import { createApp, HeavyReads, LiveHub, LoginLimiter, RedisRateLimiter, type RateLimiter } from '@sdx/app-api';
import { startWorker, type RunningWorker } from '@sdx/app-worker';
import { type AppConfig, createLogger, loadConfig } from '@sdx/config';
import { createDb, type Db } from '@sdx/db';
import {
  createApiKey,
  createWorkspace,
  type Clock,
  type CreateWorkspaceOptions,
  grantCredits,
  lockBalance,
  newId,
  planReservation,
  systemClock,
} from '@sdx/domain/testing';
import type { Provider } from '@sdx/providers';
import type { Resolver } from '@sdx/webhooks';
import { BackgroundRunner, createRuntime, type Runtime, taskNamed, untilRedisReady } from '@sdx/runtime';
import { writeReservations } from '@sdx/domain/testing';
import { createResponseValidator } from './response-validator';
import { baseDatabaseUrl, databaseUrlFor, templateDb, testRedisUrl } from './env';

import type { LooseJson } from './loose-json';

/**
 * One isolated service per test file: its own database cloned from the migrated template, its
 * own Redis key prefix, a real API app and (optionally) a real worker. Nothing is mocked.
 */
export interface TestStack {
  runtime: Runtime;
  config: AppConfig;
  app: ReturnType<typeof createApp>;
  /** Requests whose responses are checked against openapi.yaml. */
  api: ContractClient;
  databaseUrl: string;
  databaseName: string;
  /** The API's live-progress streams. */
  live: LiveHub;
  /**
   * The workers' `mail` and `recharge` tasks of the background catalog, run beside the API so a
   * stack without a worker sends its mail and charges its recharges as a deployment does: the
   * outbox looked at every 200 ms, recharges every 100 ms, each at once when a route wakes it.
   */
  background: BackgroundRunner;
  worker: RunningWorker | null;
  /** With `stripe`: the app's loopback origin, where the fake Stripe sends its events. */
  url: string | null;
  startWorker(concurrency?: number): RunningWorker;
  workspace(options?: Partial<CreateWorkspaceOptions>): Promise<SeededWorkspace>;
  close(): Promise<void>;
}

export interface SeededWorkspace {
  workspaceId: string;
  keyId: string;
  apiKey: string;
  /** Headers that authenticate as this workspace. */
  auth: Record<string, string>;
  grant(credits: number, kind?: 'purchased' | 'promotional', expiresAt?: Date | null): Promise<void>;
}

export interface StackOptions {
  env?: Record<string, string>;
  providers?: Provider[];
  clock?: Clock;
  withWorker?: boolean;
  workerConcurrency?: number;
  limiter?: RateLimiter;
  /** Where the stack's processes log (default: LOG_LEVEL of TEST_LOG_LEVEL, to stdout). */
  logDestination?: { write(line: string): void };
  /** How webhook hosts resolve (a fake DNS); the system's resolver otherwise. */
  webhookResolver?: Resolver;
  /**
   * A fake Stripe (@sdx/fake-stripe) to bill through: STRIPE_SECRET_KEY, STRIPE_WEBHOOK_SECRET and
   * STRIPE_API_BASE are set from it, the app listens on a loopback port, and the fake sends its
   * events to the app's /v1/billing/stripe/webhook.
   */
  stripe?: StackStripe;
  /** Failed sign-ins allowed (the service's LOGIN_LIMITS otherwise): raised by tests that are not about them. */
  loginLimits?: { perEmail: number; perAddress: number; windowSeconds: number };
}

/** What the stack needs of a fake Stripe (structurally, so this package does not depend on it). */
export interface StackStripe {
  readonly url: string;
  readonly secretKey: string;
  readonly webhookSecret: string;
  setWebhookUrl(url: string | null): void;
}

export async function createTestDatabase(): Promise<{ name: string; url: string; drop: () => Promise<void> }> {
  const name = `sdx_t_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: baseDatabaseUrl() });
  await admin.connect();
  try {
    await admin.query(`create database ${name} template ${templateDb()}`);
  } finally {
    await admin.end();
  }
  return {
    name,
    url: databaseUrlFor(name),
    async drop() {
      const c = new pg.Client({ connectionString: baseDatabaseUrl() });
      await c.connect();
      try {
        await c.query(`drop database if exists ${name} with (force)`);
      } finally {
        await c.end();
      }
    },
  };
}

/** A database cloned from the migrated template and a Db on it; drop() closes the one and drops the other. */
export async function createTestDb(): Promise<{ db: Db; url: string; drop: () => Promise<void> }> {
  const database = await createTestDatabase();
  const db = createDb({ connectionString: database.url, max: 2 });
  return {
    db,
    url: database.url,
    async drop() {
      await db.destroy();
      await database.drop();
    },
  };
}

export async function startTestStack(options: StackOptions = {}): Promise<TestStack> {
  const database = await createTestDatabase();
  const prefix = `sdxt${randomBytes(4).toString('hex')}`;
  const config = loadConfig({
    NODE_ENV: 'test',
    DATABASE_URL: database.url,
    REDIS_URL: testRedisUrl(),
    REDIS_PREFIX: prefix,
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    JOB_RETRY_BASE_MS: '50',
    HEARTBEAT_INTERVAL_MS: '200',
    HEARTBEAT_TIMEOUT_MS: '3000',
    RECONCILE_INTERVAL_MS: '500',
    SYNC_TIMEOUT_MS: '15000',
    // Every request of a test stack comes from one loopback address; the bound's own tests set it low.
    SIGNUP_LIMIT_PER_HOUR: '10000',
    ...(options.stripe
      ? {
          STRIPE_SECRET_KEY: options.stripe.secretKey,
          STRIPE_WEBHOOK_SECRET: options.stripe.webhookSecret,
          STRIPE_API_BASE: options.stripe.url,
        }
      : {}),
    ...options.env,
  });
  const log = options.logDestination ? createLogger({ ...config, logFormat: 'json' }, { name: 'test' }, options.logDestination) : undefined;
  const runtime = createRuntime(config, {
    name: 'test',
    providers: options.providers,
    clock: options.clock ?? systemClock,
    dbPoolSize: 20,
    log,
    webhookResolver: options.webhookResolver,
  });
  await untilRedisReady(runtime);
  const limiter = options.limiter ?? new RedisRateLimiter(runtime.redis, config.redisPrefix);
  const live = new LiveHub({
    db: runtime.db,
    redisUrl: config.redisUrl,
    redisClusterNodes: config.redisClusterNodes,
    prefix: config.redisPrefix,
    log: runtime.log,
  });
  // As the API process builds it: heavy reads on a pool of their own.
  const heavyReads = HeavyReads.fromConfig(config);
  const background = new BackgroundRunner({
    tasks: [taskNamed('mail'), taskNamed('recharge')],
    context: { services: runtime.services, redisUrl: config.redisUrl },
    everyMs: { mail: 200, recharge: 100 },
  }).start();
  const mailer = { kick: () => background.kick('mail') };
  const loginLimiter = options.loginLimits
    ? new LoginLimiter(runtime.redis, config.redisPrefix, config.signupLimitPerHour, options.loginLimits)
    : undefined;
  const app = createApp({
    services: runtime.services,
    registry: runtime.registry,
    limiter,
    redis: runtime.redis,
    live,
    heavyReads,
    mailer,
    loginLimiter,
  });
  const served = options.stripe ? await listen(app) : null;
  if (served) options.stripe!.setWebhookUrl(`${served.url}/v1/billing/stripe/webhook`);
  const stack: TestStack = {
    runtime,
    config,
    app,
    api: new ContractClient(app),
    databaseUrl: database.url,
    databaseName: database.name,
    live,
    background,
    worker: null,
    url: served?.url ?? null,
    startWorker(concurrency = options.workerConcurrency ?? 4) {
      const worker = startWorker({
        services: runtime.services,
        providers: runtime.registry,
        redisUrl: config.redisUrl,
        concurrency,
      });
      stack.worker = worker;
      return worker;
    },
    async workspace(ws = {}) {
      return seedWorkspace(runtime, ws);
    },
    async close() {
      await stack.worker?.close();
      if (served) {
        options.stripe!.setWebhookUrl(null);
        served.server.closeAllConnections();
        await new Promise<void>((resolve) => served.server.close(() => resolve()));
      }
      await background.stop();
      await live.close();
      await heavyReads.close();
      await runtime.queues.jobs.obliterate({ force: true }).catch(() => undefined);
      await runtime.queues.batchChildren.obliterate({ force: true }).catch(() => undefined);
      await runtime.queues.webhookDeliveries.obliterate({ force: true }).catch(() => undefined);
      await runtime.close();
      await database.drop();
    },
  };
  if (options.withWorker) stack.startWorker();
  return stack;
}

let seq = 0;

export async function seedWorkspace(runtime: Runtime, options: Partial<CreateWorkspaceOptions> = {}): Promise<SeededWorkspace> {
  const { workspace, key } = await runtime.db.transaction().execute(async (tx) => {
    const workspace = await createWorkspace(tx, runtime.services.clock, { name: options.name ?? `Test workspace ${++seq}`, ...options });
    const key = await createApiKey(tx, workspace.id, 'test');
    return { workspace, key };
  });
  return {
    workspaceId: workspace.id,
    keyId: key.key_id,
    apiKey: key.api_key,
    auth: { 'X-API-Key': key.api_key },
    async grant(credits, kind = 'purchased', expiresAt = null) {
      await runtime.db
        .transaction()
        .execute((tx) => grantCredits(tx, workspace, runtime.services.clock.now(), { credits, kind, expiresAt }));
    },
  };
}

type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';

export interface CallOptions {
  headers?: Record<string, string>;
  body?: unknown;
  query?: Record<string, string | number | boolean>;
  /** Raw body text (for malformed-JSON tests). */
  raw?: string;
}

const validator = createResponseValidator();

/** supertest, plus a check of every response against openapi.yaml: drift fails the test. */
export class ContractClient {
  constructor(private readonly app: ReturnType<typeof createApp>) {}

  async call(method: Method, path: string, options: CallOptions = {}): Promise<request.Response> {
    let req = request(this.app)[method](path);
    for (const [name, value] of Object.entries(options.headers ?? {})) req = req.set(name, value);
    if (options.query) req = req.query(options.query);
    let res: request.Response;
    if (options.raw !== undefined) res = await req.set('Content-Type', 'application/json').send(options.raw);
    else if (options.body !== undefined) res = await req.send(options.body as object);
    else res = await req;
    const contentType = String(res.headers['content-type'] ?? '');
    const json = contentType.includes('application/json');
    validator.validate(method, new URL(path, 'http://x').pathname, res.status, json ? res.body : undefined, contentType || undefined);
    return res;
  }

  get(path: string, options?: CallOptions) {
    return this.call('get', path, options);
  }
  post(path: string, options?: CallOptions) {
    return this.call('post', path, options);
  }
  put(path: string, options?: CallOptions) {
    return this.call('put', path, options);
  }
  patch(path: string, options?: CallOptions) {
    return this.call('patch', path, options);
  }
  delete(path: string, options?: CallOptions) {
    return this.call('delete', path, options);
  }
}

/** Polls until `check` returns a value or the timeout passes. */
export async function eventually<T>(
  check: () => T | undefined | null | false | Promise<T | undefined | null | false>,
  timeoutMs = 20_000,
  intervalMs = 50,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value) return value;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline) {
      const cause = last instanceof Error || typeof last === 'string' ? String(last) : JSON.stringify(last);
      throw new Error(`condition not met within ${timeoutMs} ms${last ? `: ${cause}` : ''}`);
    }
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

/** Listens on an ephemeral loopback port (for tests that need a real socket). */
export async function listen(app: ReturnType<typeof createApp>): Promise<{ url: string; server: Server }> {
  const { createServer } = await import('node:http');
  const server = createServer(app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, server };
}

export interface ServedStack {
  stack: TestStack;
  /** The app's loopback origin, e.g. http://127.0.0.1:40123. */
  url: string;
  /** Closes the port, then the stack. */
  close(): Promise<void>;
}

/** A test stack whose app listens on a loopback port, for clients that need a real URL (the SDK, the CLI). */
export async function startServedStack(options: StackOptions = {}): Promise<ServedStack> {
  const stack = await startTestStack(options);
  const { url, server } = await listen(stack.app);
  return {
    stack,
    url,
    async close() {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await stack.close();
    },
  };
}

/** Polls GET /v1/jobs/{id} as `auth` until `accept` holds; returns the job body. */
export async function waitForJob(
  stack: TestStack,
  auth: Record<string, string>,
  jobId: string,
  accept: (job: LooseJson) => boolean,
  timeoutMs = 15_000,
): Promise<LooseJson> {
  const res = await eventually(
    async () => {
      const r = await stack.api.get(`/v1/jobs/${jobId}`, { headers: auth });
      return accept(r.body) ? r : undefined;
    },
    timeoutMs,
    25,
  );
  return res.body;
}

/** Rows of a workspace in one of its tables (to check that a refused request wrote nothing). */
export async function countWorkspaceRows(
  stack: TestStack,
  table: 'jobs' | 'batches' | 'idempotency_keys' | 'credit_reservations' | 'credit_ledger',
  workspaceId: string,
): Promise<number> {
  const row = await stack.runtime.db
    .selectFrom(table)
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('workspace_id', '=', workspaceId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

export interface UsageBody {
  credit_limit: number;
  credits_used: number;
  credits_reserved: number;
  credits_remaining: number;
  [field: string]: unknown;
}

/**
 * GET /v1/usage/current as `ws`, checking the usage invariant of decisions.md on the way (no
 * purchased or promotional credits: used + reserved + remaining = credit_limit, never negative).
 */
export async function usageChecked(stack: TestStack, ws: Pick<SeededWorkspace, 'auth'>): Promise<UsageBody> {
  const res = await stack.api.get('/v1/usage/current', { headers: ws.auth });
  if (res.status !== 200) throw new Error(`GET /v1/usage/current answered ${res.status}`);
  const u = res.body as UsageBody;
  if (u.credits_used + u.credits_reserved + u.credits_remaining !== u.credit_limit || u.credits_remaining < 0) {
    throw new Error(
      `usage invariant broken: ${u.credits_used} used + ${u.credits_reserved} reserved + ${u.credits_remaining} remaining vs limit ${u.credit_limit}`,
    );
  }
  return u;
}

/** Reserves `credits` for a new job ID in the workspace, as an admission would; returns the job ID. */
export async function reserveForTest(stack: TestStack, workspaceId: string, credits: number): Promise<string> {
  const jobId = newId('job');
  await stack.runtime.db.transaction().execute(async (tx) => {
    const workspace = await tx.selectFrom('workspaces').selectAll().where('id', '=', workspaceId).executeTakeFirstOrThrow();
    const now = new Date();
    const balance = await lockBalance(tx, workspaceId, now, workspace.monthly_quota);
    const next = planReservation(workspace, balance, now, { jobId, credits, units: credits });
    await writeReservations(tx, [next.planned], [next.balance], now);
  });
  return jobId;
}
