import { type ChildProcess, spawn } from 'node:child_process';
import { createServer } from 'node:net';
import type IORedis from 'ioredis';
import { createApp, RedisRateLimiter } from '@sdx/app-api';
import { createFastRedis } from '@sdx/queue';
import { createRuntime, type Runtime } from '@sdx/runtime';
import { ContractClient, eventually, startTestStack, untilRedisReady, type TestStack, countWorkspaceRows } from '@sdx/testing';

/**
 * Per-minute rate limit through HTTP against the real Redis: headers, 429 with Retry-After,
 * one limit shared by several API processes, and Redis outages (503, nothing written, recovery).
 */

let stack: TestStack;
beforeAll(async () => {
  stack = await startTestStack();
});
afterAll(async () => {
  await stack.close();
});

const jobBody = (target: string) => ({ platform: 'instagram', operation: 'profile', target });

/** An API app over the stack's database and queues whose rate limiter uses `redis`. */
function appWithLimiterRedis(redis: IORedis): ContractClient {
  const limiter = new RedisRateLimiter(redis, stack.config.redisPrefix);
  const app = createApp({ services: stack.runtime.services, registry: stack.runtime.registry, limiter, redis });
  return new ContractClient(app);
}

const countRows = (table: 'jobs' | 'idempotency_keys' | 'credit_reservations', workspaceId: string) =>
  countWorkspaceRows(stack, table, workspaceId);

describe('rate limiter outage', () => {
  it('answers 503 rate_limiter_unavailable at once when Redis is unreachable, writing nothing', async () => {
    const dead = createFastRedis('redis://127.0.0.1:1/0');
    dead.on('error', () => undefined);
    try {
      const api = appWithLimiterRedis(dead);
      const ws = await stack.workspace();
      for (let i = 0; i < 3; i++) {
        const started = performance.now();
        const res = await api.post('/v1/jobs', { headers: { ...ws.auth, 'Idempotency-Key': `dead-${i}` }, body: jobBody(`deadredis${i}`) });
        const elapsed = performance.now() - started;
        expect(res.status).toBe(503);
        expect(res.body.detail.error).toBe('rate_limiter_unavailable');
        expect(res.headers['retry-after']).toMatch(/^[1-9]\d*$/);
        // At once: not after a Redis command or connect timeout (5 s); the margin is for a
        // loaded machine, where the app's first request also compiles its validators.
        expect(elapsed).toBeLessThan(2_000);
      }
      expect(await countRows('jobs', ws.workspaceId)).toBe(0);
      expect(await countRows('idempotency_keys', ws.workspaceId)).toBe(0);
      expect(await countRows('credit_reservations', ws.workspaceId)).toBe(0);
      const usage = await stack.api.get('/v1/usage/current', { headers: ws.auth });
      expect(usage.body.credits_reserved).toBe(0);
    } finally {
      dead.disconnect();
    }
  });

  it('recovers by itself when Redis comes back', async () => {
    const port = await freePort();
    let server = await startRedisServer(port);
    const redis = createFastRedis(`redis://127.0.0.1:${port}/0`);
    redis.on('error', () => undefined);
    try {
      await eventually(() => redis.status === 'ready', 5000);
      const api = appWithLimiterRedis(redis);
      const ws = await stack.workspace();

      const before = await api.post('/v1/jobs', { headers: ws.auth, body: jobBody('recovery_one') });
      expect(before.status).toBe(202);

      await stopRedisServer(server);
      await eventually(() => redis.status !== 'ready', 5000);
      const started = performance.now();
      const down = await api.post('/v1/jobs', { headers: ws.auth, body: jobBody('recovery_two') });
      expect(performance.now() - started).toBeLessThan(500);
      expect(down.status).toBe(503);
      expect(down.body.detail.error).toBe('rate_limiter_unavailable');
      expect(await countRows('jobs', ws.workspaceId)).toBe(1);

      server = await startRedisServer(port);
      const after = await eventually(
        async () => {
          const res = await api.post('/v1/jobs', { headers: ws.auth, body: jobBody('recovery_two') });
          if (res.status === 503) return undefined;
          return res;
        },
        10_000,
        100,
      );
      expect(after.status).toBe(202);
      expect(after.body.status).toBe('queued');
      expect(after.headers['ratelimit-limit']).toBeDefined();
      expect(await countRows('jobs', ws.workspaceId)).toBe(2);
    } finally {
      redis.disconnect();
      await stopRedisServer(server);
    }
  });
});

describe('per-minute rate limit', () => {
  it('counts RateLimit-Remaining down, then answers 429 with Retry-After in whole seconds', async () => {
    const ws = await stack.workspace({ rateLimitPerMinute: 5 });
    const remaining: number[] = [];
    for (let i = 0; i < 5; i++) {
      const res = await stack.api.get('/v1/account', { headers: ws.auth });
      expect(res.status).toBe(200);
      expect(res.headers['ratelimit-limit']).toBe('5');
      const reset = Number(res.headers['ratelimit-reset']);
      expect(Number.isInteger(reset)).toBe(true);
      expect(reset).toBeGreaterThanOrEqual(1);
      expect(reset).toBeLessThanOrEqual(60);
      remaining.push(Number(res.headers['ratelimit-remaining']));
    }
    expect(remaining).toEqual([4, 3, 2, 1, 0]);

    const limited = await stack.api.post('/v1/jobs', { headers: ws.auth, body: jobBody('ratelimited') });
    expect(limited.status).toBe(429);
    expect(limited.body.detail.error).toBe('rate_limit_exceeded');
    expect(limited.headers['retry-after']).toMatch(/^[1-9]\d*$/);
    const retryAfter = Number(limited.headers['retry-after']);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(limited.headers['ratelimit-remaining']).toBe('0');
    expect(limited.headers['ratelimit-limit']).toBe('5');
    // The limit is checked before any database write.
    expect(await countRows('jobs', ws.workspaceId)).toBe(0);
  });

  it('keeps one allowance per workspace', async () => {
    const a = await stack.workspace({ rateLimitPerMinute: 2 });
    const b = await stack.workspace({ rateLimitPerMinute: 2 });
    for (let i = 0; i < 2; i++) expect((await stack.api.get('/v1/account', { headers: a.auth })).status).toBe(200);
    expect((await stack.api.get('/v1/account', { headers: a.auth })).status).toBe(429);
    const other = await stack.api.get('/v1/account', { headers: b.auth });
    expect(other.status).toBe(200);
    expect(other.headers['ratelimit-remaining']).toBe('1');
  });

  it('is shared by two API processes over the same Redis', async () => {
    const second: Runtime = createRuntime(stack.config, { name: 'api-2', dbPoolSize: 4 });
    try {
      await untilRedisReady(second);
      const limiter = new RedisRateLimiter(second.redis, stack.config.redisPrefix);
      const api2 = new ContractClient(createApp({ services: second.services, registry: second.registry, limiter, redis: second.redis }));
      const ws = await stack.workspace({ rateLimitPerMinute: 6 });
      const remaining: number[] = [];
      for (let i = 0; i < 6; i++) {
        const client = i % 2 === 0 ? stack.api : api2;
        const res = await client.get('/v1/account', { headers: ws.auth });
        expect(res.status).toBe(200);
        remaining.push(Number(res.headers['ratelimit-remaining']));
      }
      expect(remaining).toEqual([5, 4, 3, 2, 1, 0]);
      const fromFirst = await stack.api.get('/v1/account', { headers: ws.auth });
      const fromSecond = await api2.get('/v1/account', { headers: ws.auth });
      expect(fromFirst.status).toBe(429);
      expect(fromSecond.status).toBe(429);
      expect(fromSecond.body.detail.error).toBe('rate_limit_exceeded');
    } finally {
      await second.close();
    }
  });

  it('decides requests arriving in the same turn as if each were counted alone, in arrival order', async () => {
    const limiter = new RedisRateLimiter(stack.runtime.redis, stack.config.redisPrefix);
    const a = await stack.workspace({ rateLimitPerMinute: 7 });
    const b = await stack.workspace({ rateLimitPerMinute: 3 });
    const calls: Array<Promise<string>> = [];
    // Same turn of the event loop: one Redis call per workspace.
    for (let i = 0; i < 10; i++) calls.push(limiter.consume(a.workspaceId, 7).then((d) => `a:${d.allowed}:${d.remaining}`));
    for (let i = 0; i < 4; i++) calls.push(limiter.consume(b.workspaceId, 3).then((d) => `b:${d.allowed}:${d.remaining}`));
    expect(await Promise.all(calls)).toEqual([
      ...[6, 5, 4, 3, 2, 1, 0].map((r) => `a:true:${r}`),
      'a:false:0',
      'a:false:0',
      'a:false:0',
      ...[2, 1, 0].map((r) => `b:true:${r}`),
      'b:false:0',
    ]);
    // A later turn continues from the counts the first one left.
    const later = await limiter.consume(b.workspaceId, 5);
    expect(later).toMatchObject({ allowed: true, remaining: 0 });
    const res = await stack.api.get('/v1/account', { headers: a.auth });
    expect(res.status).toBe(429);
  });

  it('admits exactly the allowance under concurrent requests from two processes', async () => {
    const second: Runtime = createRuntime(stack.config, { name: 'api-2', dbPoolSize: 4 });
    try {
      await untilRedisReady(second);
      const limiter = new RedisRateLimiter(second.redis, stack.config.redisPrefix);
      const api2 = new ContractClient(createApp({ services: second.services, registry: second.registry, limiter, redis: second.redis }));
      const ws = await stack.workspace({ rateLimitPerMinute: 10 });
      const responses = await Promise.all(
        Array.from({ length: 30 }, (_, i) => (i % 2 === 0 ? stack.api : api2).get('/v1/account', { headers: ws.auth })),
      );
      expect(responses.filter((r) => r.status === 200)).toHaveLength(10);
      expect(responses.filter((r) => r.status === 429)).toHaveLength(20);
    } finally {
      await second.close();
    }
  });
});

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}

async function startRedisServer(port: number): Promise<ChildProcess> {
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  await new Promise<void>((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`redis-server did not start: ${out}`)), 5000);
    child.once('error', reject);
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      if (/ready to accept connections/i.test(out)) {
        clearTimeout(timer);
        resolve();
      }
    });
  });
  return child;
}

async function stopRedisServer(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  await new Promise<void>((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
}
