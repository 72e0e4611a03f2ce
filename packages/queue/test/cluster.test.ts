import IORedis from 'ioredis';
import { sql } from 'kysely';
import { isCluster, queuePrefix, QUEUES } from '@sdx/queue';
import {
  checkLedger,
  eventually,
  keySlot,
  type PrivateRedisCluster,
  startRedisCluster,
  startTestStack,
  type TestStack,
} from '@sdx/testing';

/**
 * The queues on a Redis Cluster (REDIS_CLUSTER_NODES): a six-node cluster of its own (three
 * masters, three replicas). Jobs and a batch go from the API through BullMQ to a worker and are
 * settled; BullMQ's keys carry the hash-tagged prefix and so share one slot, and the
 * reconciler's data epoch is kept there. One Redis keeps the prefix as it was.
 */
let cluster: PrivateRedisCluster;
let stack: TestStack;

beforeAll(async () => {
  cluster = await startRedisCluster();
  stack = await startTestStack({ withWorker: true, env: { REDIS_CLUSTER_NODES: cluster.nodesEnv } });
}, 60_000);
afterAll(async () => {
  await stack?.close();
  await cluster?.stop();
});

it('connects to the cluster and hash-tags the queues prefix (one Redis keeps it as it was)', () => {
  expect(isCluster(stack.runtime.redis)).toBe(true);
  expect(stack.config.redisClusterNodes).toHaveLength(6);
  expect(stack.runtime.queues.prefix).toBe(`{${stack.config.redisPrefix}}`);
  const single = new IORedis('redis://127.0.0.1:6379/0', { lazyConnect: true });
  expect(queuePrefix('sdx', single)).toBe('sdx');
  expect(queuePrefix('{sdx}', stack.runtime.redis)).toBe('{sdx}');
  single.disconnect();
});

it('runs jobs and a batch end to end: submitted, taken by the worker, completed and settled', async () => {
  const ws = await stack.workspace({ credits: 10_000, rateLimitPerMinute: 10_000, maxActiveJobs: 1000 });
  const ids: string[] = [];
  for (let i = 0; i < 12; i++) {
    const res = await stack.api.post('/v1/jobs', {
      headers: ws.auth,
      body: { platform: 'instagram', operation: 'profile', target: `cluster_${i}` },
    });
    expect(res.status).toBe(202);
    ids.push(res.body.id as string);
  }
  const batch = await stack.api.post('/v1/batches', {
    headers: ws.auth,
    body: { platform: 'instagram', operation: 'profile', targets: Array.from({ length: 20 }, (_, i) => `cluster_batch_${i}`) },
  });
  expect(batch.status).toBe(202);
  const done = await eventually(async () => {
    const { rows } = await sql<{
      n: number;
    }>`select count(*)::int as n from jobs where workspace_id = ${ws.workspaceId} and status = 'completed'`.execute(stack.runtime.db);
    return rows[0].n === 32 ? rows[0].n : null;
  }, 30_000);
  expect(done).toBe(32);
  for (const id of ids.slice(0, 3)) {
    const job = await stack.api.get(`/v1/jobs/${id}`, { headers: ws.auth });
    expect(job.body.status).toBe('completed');
    expect(job.body.billed_credits).toBeGreaterThan(0);
  }
  const ledger = await checkLedger(stack.runtime.db);
  expect(ledger.problems).toEqual([]);
  expect(ledger.completed).toBe(32);
  // The queue's keys went to the slot of the prefix's hash tag.
  const slot = keySlot(`${stack.runtime.queues.prefix}:${QUEUES.jobs}:id`);
  expect(slot).toBe(keySlot(stack.runtime.queues.prefix));
  expect(await stack.runtime.redis.exists(`${stack.runtime.queues.prefix}:${QUEUES.jobs}:meta`)).toBe(1);
});

it('keeps the data epoch on the cluster', async () => {
  const first = await stack.runtime.queues.dataEpoch('cluster-test', new Date(1_000));
  const again = await stack.runtime.queues.dataEpoch('cluster-test', new Date(2_000));
  expect(again.getTime()).toBe(first.getTime());
});
