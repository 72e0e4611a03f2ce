/**
 * A worker process for the jobs benchmark, forked so that it owns its event loop as a real
 * worker process does.
 *   real: the service's worker (startWorker) over its own runtime, as apps/worker runs it.
 *   raw:  a bare BullMQ Worker with a no-op processor, reporting when `expected` entries ran.
 * The child reports {type: 'started', at} once consuming, and for raw {type: 'done', at};
 * times are epoch milliseconds with sub-millisecond precision (epochNow).
 */
import { fork } from 'node:child_process';
import { Worker } from 'bullmq';
import { startWorker } from '@sdx/app-worker';
import { loadConfig } from '@sdx/config';
import { createWorkerRedis, type RedisNode } from '@sdx/queue';
import { createRuntime } from '@sdx/runtime';

export interface WorkerPlan {
  kind: 'real' | 'raw';
  concurrency: number;
  redisUrl: string;
  /** raw: a Redis Cluster's nodes (REDIS_CLUSTER_NODES), when the run is on one. */
  clusterNodes?: RedisNode[];
  prefix: string;
  /** real: the environment the worker's configuration is read from. */
  env?: Record<string, string>;
  /** raw: queue name and how many entries to wait for. */
  queueName?: string;
  expected?: number;
}

type ChildMessage = { type: 'started'; at: number } | { type: 'done'; at: number };

export function epochNow(): number {
  return performance.timeOrigin + performance.now();
}

export interface WorkerChild {
  startedAt: number;
  /** The child's process ID (for its CPU time, bench/lib/cpu.ts). */
  pid: number;
  /** raw only: when the expected number of entries were processed. */
  done: Promise<number>;
  stop(): Promise<void>;
}

export function startWorkerChild(plan: WorkerPlan): Promise<WorkerChild> {
  const child = fork(__filename, ['--worker-child'], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  let resolveDone!: (at: number) => void;
  const done = new Promise<number>((resolve) => {
    resolveDone = resolve;
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.on('message', (raw) => {
      const message = raw as ChildMessage;
      if (message.type === 'started') {
        resolve({
          startedAt: message.at,
          pid: child.pid!,
          done,
          async stop() {
            if (child.exitCode === null) child.send('stop');
            await exited;
          },
        });
      } else if (message.type === 'done') resolveDone(message.at);
    });
    void exited.then(() => reject(new Error('worker child exited before starting'))); // exited only resolves
    child.send(plan);
  });
}

async function runChild(plan: WorkerPlan): Promise<() => Promise<void>> {
  if (plan.kind === 'real') {
    const config = loadConfig({ ...plan.env, LOG_LEVEL: 'silent' });
    const runtime = createRuntime(config, { name: 'bench-worker', dbPoolSize: plan.concurrency + 4 });
    while (runtime.redis.status !== 'ready') await new Promise((r) => setTimeout(r, 10));
    const worker = startWorker({
      services: runtime.services,
      providers: runtime.registry,
      redisUrl: plan.redisUrl,
      concurrency: plan.concurrency,
      reconcile: false,
    });
    process.send!({ type: 'started', at: epochNow() } satisfies ChildMessage);
    return async () => {
      await worker.close();
      await runtime.close();
    };
  }
  const connection = createWorkerRedis({ url: plan.redisUrl, clusterNodes: plan.clusterNodes });
  let processed = 0;
  const worker = new Worker(
    plan.queueName!,
    () => {
      processed++;
      if (processed === plan.expected) process.send!({ type: 'done', at: epochNow() } satisfies ChildMessage);
      return Promise.resolve();
    },
    { connection, prefix: plan.prefix, concurrency: plan.concurrency },
  );
  process.send!({ type: 'started', at: epochNow() } satisfies ChildMessage);
  return async () => {
    await worker.close();
    connection.disconnect();
  };
}

if (process.argv.includes('--worker-child')) {
  let stop: (() => Promise<void>) | null = null;
  process.on('message', (message) => {
    if (message === 'stop') {
      (stop ?? (() => Promise.resolve()))().then(
        () => process.exit(0),
        (error: unknown) => {
          console.error(error);
          process.exit(1);
        },
      );
      return;
    }
    runChild(message as WorkerPlan)
      .then((s) => {
        stop = s;
      })
      .catch((error) => {
        console.error(error);
        process.exit(1);
      });
  });
}
