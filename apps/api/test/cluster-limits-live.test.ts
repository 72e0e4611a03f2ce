import http from 'node:http';
import type { Server } from 'node:http';
import { createApp, RedisRateLimiter } from '@sdx/app-api';
import { StreamSlots } from '../src/live/slots';
import { createFastRedis, isCluster, type RedisClient } from '@sdx/queue';
import {
  ContractClient,
  listen,
  type PrivateRedisCluster,
  startRedisCluster,
  heldSandbox,
  startTestStack,
  type TestStack,
  untilRedisReady,
} from '@sdx/testing';

/**
 * The rate limiter and live progress on a Redis Cluster (REDIS_CLUSTER_NODES), a six-node
 * cluster of this file's own: two API instances, each with its own cluster connection, count
 * one workspace's requests against one limit (429 past it, on either); a job's Server-Sent
 * Events stream follows it to its end through the cluster's pub/sub; the stream slots of
 * workspaces whose keys lie on different nodes are renewed together.
 */
let cluster: PrivateRedisCluster;
// Slow pages wait while a test holds them.
const sandbox = heldSandbox();
let stack: TestStack;
let server: Server;
let base: string;
const extra: RedisClient[] = [];

beforeAll(async () => {
  cluster = await startRedisCluster();
  stack = await startTestStack({ withWorker: true, providers: [sandbox.provider], env: { REDIS_CLUSTER_NODES: cluster.nodesEnv } });
  ({ url: base, server } = await listen(stack.app));
}, 60_000);
afterAll(async () => {
  server?.closeAllConnections();
  if (server) await new Promise((resolve) => server.close(resolve));
  for (const redis of extra) redis.disconnect();
  await stack?.close();
  await cluster?.stop();
});

/** A second API instance: its own cluster connection and limiter, the stack's services. */
async function secondApi(): Promise<ContractClient> {
  const redis = createFastRedis({ url: stack.config.redisUrl, clusterNodes: stack.config.redisClusterNodes });
  redis.on('error', () => undefined);
  extra.push(redis);
  await untilRedisReady({ redis });
  const limiter = new RedisRateLimiter(redis, stack.config.redisPrefix);
  return new ContractClient(createApp({ services: stack.runtime.services, registry: stack.runtime.registry, limiter, redis }));
}

it('counts a workspace against one limit across two API instances: 429 past it on either', async () => {
  expect(isCluster(stack.runtime.redis)).toBe(true);
  const other = await secondApi();
  const apis = [stack.api, other];
  const ws = await stack.workspace({ rateLimitPerMinute: 6 });
  const statuses: number[] = [];
  for (let i = 0; i < 6; i++) {
    const res = await apis[i % 2].get('/v1/jobs', { headers: ws.auth });
    statuses.push(res.status);
    expect(res.headers['ratelimit-remaining']).toBe(String(5 - i));
  }
  expect(statuses).toEqual([200, 200, 200, 200, 200, 200]);
  for (const api of apis) {
    const res = await api.get('/v1/jobs', { headers: ws.auth });
    expect(res.status).toBe(429);
    expect(res.body.detail.error).toBe('rate_limit_exceeded');
    expect(Number(res.headers['retry-after'])).toBeGreaterThanOrEqual(1);
  }
  // Another workspace (its key on its own slot) has its own allowance.
  const fresh = await stack.workspace({ rateLimitPerMinute: 6 });
  expect((await other.get('/v1/jobs', { headers: fresh.auth })).status).toBe(200);
});

it('streams a job to its end over the cluster pub/sub', async () => {
  const ws = await stack.workspace({ credits: 1000, rateLimitPerMinute: 1000 });
  // Two pages of 100 items: the pages wait until the stream has said its first event, so the
  // stream is open before the first page is saved.
  const letGo = sandbox.hold();
  const created = await stack.api.post('/v1/jobs', {
    headers: ws.auth,
    body: { platform: 'youtube', operation: 'playlist_items', target: 'PLcluster_sandbox_slow_100', limit: 200 },
  });
  expect(created.status).toBe(202);
  type Seen = { event: string; status: string; progress: number };
  const events = await new Promise<Seen[]>((resolve, reject) => {
    const seen: Seen[] = [];
    const request = http.get(`${base}/v1/jobs/${created.body.id}/events`, { headers: ws.auth, agent: false }, (res) => {
      expect(res.statusCode).toBe(200);
      let buffer = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        buffer += chunk;
        let cut: number;
        while ((cut = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, cut);
          buffer = buffer.slice(cut + 2);
          if (block.startsWith(':')) continue;
          const event = /^event: (.*)$/m.exec(block)?.[1] ?? '';
          const data = JSON.parse(/^data: (.*)$/m.exec(block)?.[1] ?? '{}') as { status: string; progress_current: number };
          seen.push({ event, status: data.status, progress: data.progress_current });
          letGo();
        }
      });
      res.on('end', () => resolve(seen));
    });
    request.on('error', reject);
    setTimeout(() => reject(new Error(`stream did not end: ${JSON.stringify(seen)}`)), 20_000).unref();
  });
  // The state when the stream opened, the first page saved and the end: each change after the
  // first heard over the cluster's pub/sub (nothing polls).
  expect(['queued', 'running']).toContain(events[0].status);
  expect(events.filter((e) => e.event === 'progress').map((e) => e.progress)).toContain(100);
  expect(events.at(-1)).toEqual({ event: 'status', status: 'completed', progress: 200 });
  expect(stack.live.stats()).toEqual({ streams: 0, topics: 0 });
});

it('takes and renews stream slots of workspaces on different nodes', async () => {
  const slots = new StreamSlots(stack.runtime.redis, stack.config.redisPrefix, 60_000);
  const workspaces = Array.from({ length: 8 }, (_, i) => `ws_cluster_${i}`);
  for (const ws of workspaces) expect(await slots.take(ws, `${ws}-s1`, 1)).toBe(true);
  expect(await slots.take(workspaces[0], 'another', 1)).toBe(false);
  await slots.renew(new Map(workspaces.map((ws) => [ws, [`${ws}-s1`]])));
  for (const ws of workspaces) expect(await slots.count(ws)).toBe(1);
  for (const ws of workspaces) await slots.release(ws, `${ws}-s1`);
  expect(await slots.count(workspaces[3])).toBe(0);
});
