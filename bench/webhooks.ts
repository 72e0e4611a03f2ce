/**
 * Webhooks benchmark, in one run, on one machine. A loopback receiver (this process) counts
 * messages and notes when each arrived; the service's worker runs in a child process, as it does
 * in production (the sandbox at zero latency).
 *
 * (a) Throughput, events per second from a completed job to its signed delivery: BENCH_EVENTS
 *     jobs are completed by a worker that neither dispatches nor delivers (WEBHOOK_CONCURRENCY=0),
 *     so their events wait in the outbox; then a worker with webhooks on starts, and the run is
 *     timed from its start to the last message received: dispatch (outbox → queue, bodies
 *     rendered), attempts (lease, Standard Webhooks signature, SSRF-guarded send, record). Against
 *     the same number of bare got POSTs of the same bodies to the same receiver, from a child
 *     process, with as many in flight as the service sends to one receiver (PER_WEBHOOK_IN_FLIGHT). The two take
 *     turns for BENCH_TURNS rounds; the judged ratio is the median of the rounds'.
 * (b) Latency at BENCH_RATE completions per second (200) for BENCH_SECONDS (20): jobs are
 *     submitted at that rate (the service's createJob, open loop) to a worker with webhooks on;
 *     each message's latency is its arrival at the receiver minus its job's finished_at.
 *
 * Targets (issue 51): (a) ratio ≥ 0.5; (b) p99 < 250 ms. Exits with code 1 when one is missed.
 * The judged figures are printed last as one line `BENCH_RESULT {json}` (bench:ab reads it).
 *
 * Run: npm run bench:webhooks   (BENCH_PARTS=a or b runs one part only; BENCH_STAGES=1 splits (b) into dispatch and delivery)
 *   BENCH_EVENTS (2000), BENCH_TURNS (3), BENCH_RATE (200), BENCH_SECONDS (20),
 *   BENCH_WORKER_CONCURRENCY (16), BENCH_LOG_LEVEL (silent); DATABASE_URL / REDIS_URL.
 */
import { fork } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import got from 'got';
import { PER_WEBHOOK_IN_FLIGHT } from '@sdx/app-worker';
import { loadConfig } from '@sdx/config';
import { createJob, sealerOf } from '@sdx/domain/testing';
import { createRuntime } from '@sdx/runtime';
import { benchPrefix, benchRedisUrl, createBenchDatabase } from './lib/db';
import { AMPLE, seedBenchWorkspace, waitFor } from './lib/seed';
import { ms, summarize, table, verdict } from './lib/stats';
import { epochNow, startWorkerChild } from './lib/worker-child';
import { TEST_SECRETS_KEY } from '@sdx/testing';

const EVENTS = Number(process.env.BENCH_EVENTS ?? 2000);
const ROUNDS = Math.max(1, Number(process.env.BENCH_TURNS ?? 3));
const RATE = Number(process.env.BENCH_RATE ?? 200);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 20);
const WORKER_CONCURRENCY = Number(process.env.BENCH_WORKER_CONCURRENCY ?? 16);
/** What the service sends to one receiver at once. */
const IN_FLIGHT = PER_WEBHOOK_IN_FLIGHT;
const PARTS = new Set((process.env.BENCH_PARTS ?? 'a,b').split(','));
/** Targets (issue 51, docs/performance.md): (a) ratio to bare got POSTs; (b) p99 completion → delivery. */
const TARGET_RATIO = 0.5;
const TARGET_P99_MS = 250;

interface Receiver {
  url: string;
  count: number;
  /** Arrival time (epoch ms) by job ID of job.completed messages. */
  arrivals: Map<string, number>;
  lastAt: number;
  reset(): void;
  close(): Promise<void>;
}

async function startReceiver(): Promise<Receiver> {
  const receiver = {
    count: 0,
    arrivals: new Map<string, number>(),
    lastAt: 0,
    reset() {
      receiver.count = 0;
      receiver.arrivals.clear();
      receiver.lastAt = 0;
    },
  };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const at = epochNow();
      receiver.count += 1;
      receiver.lastAt = at;
      const body = Buffer.concat(chunks).toString('utf8');
      const jobId = /"data":\{"id":"(job_[^"]+)"/.exec(body)?.[1];
      if (jobId) receiver.arrivals.set(jobId, at);
      res.statusCode = 204;
      res.end();
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return Object.assign(receiver, {
    url: `http://127.0.0.1:${port}/hooks`,
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  });
}

/** Bare got POSTs from a child process: `count` of `body`, IN_FLIGHT at once, keep-alive. */
function barePosts(url: string, body: string, count: number): Promise<{ startedAt: number }> {
  return new Promise((resolve, reject) => {
    const child = fork(__filename, ['--bare-child'], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    child.once('message', (message) => resolve(message as { startedAt: number }));
    child.once('error', reject);
    child.send({ url, body, count });
  });
}

async function runBareChild(plan: { url: string; body: string; count: number }): Promise<void> {
  const agent = { http: new http.Agent({ keepAlive: true, maxSockets: 64 }) };
  let next = 0;
  const startedAt = epochNow();
  await Promise.all(
    Array.from({ length: IN_FLIGHT }, async () => {
      while (next < plan.count) {
        next += 1;
        await got.post(plan.url, {
          body: plan.body,
          headers: { 'content-type': 'application/json' },
          timeout: { request: 10_000 },
          followRedirect: false,
          throwHttpErrors: false,
          retry: { limit: 0 },
          agent,
        });
      }
    }),
  );
  process.send!({ startedAt });
  agent.http.destroy();
}

async function main(): Promise<void> {
  process.env.PROVIDER_MODE ??= 'sandbox';
  const database = await createBenchDatabase('webhooks');
  const receiver = await startReceiver();
  const env: Record<string, string> = {
    NODE_ENV: 'production',
    SECRETS_KEY: TEST_SECRETS_KEY,
    DATABASE_URL: database.url,
    REDIS_URL: benchRedisUrl(),
    REDIS_PREFIX: benchPrefix('webhooks'),
    LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'silent',
    SANDBOX_LATENCY_MS: '0',
    SEED_DEMO: '0',
    WEBHOOK_ALLOW_HTTP: '1',
    WEBHOOK_ALLOW_PRIVATE_NETWORKS: '1',
  };
  const config = loadConfig({ ...env, LOG_LEVEL: 'silent' });
  const runtime = createRuntime(config, { name: 'bench', dbPoolSize: 8 });
  await waitFor(() => runtime.redis.status === 'ready', 10_000, 'redis');
  const workerPlan = (webhooks: boolean) => ({
    kind: 'real' as const,
    concurrency: WORKER_CONCURRENCY,
    redisUrl: config.redisUrl,
    prefix: config.redisPrefix,
    env: { ...env, WORKER_CONCURRENCY: String(WORKER_CONCURRENCY), WEBHOOK_CONCURRENCY: webhooks ? '128' : '0' },
  });
  const tenantOf = async (workspaceId: string) => ({
    workspace: await runtime.db.selectFrom('workspaces').selectAll().where('id', '=', workspaceId).executeTakeFirstOrThrow(),
    keyId: null,
    role: null,
  });
  const newWorkspace = async (label: string) => {
    const ws = await seedBenchWorkspace(runtime, { name: `bench ${label}`, ...AMPLE });
    await runtime.db
      .insertInto('webhooks')
      .values({
        id: `whk_bench_${label}`,
        workspace_id: ws.workspaceId,
        url: receiver.url,
        events: ['job.completed'],
        secret: sealerOf(config).seal(`whsec_${Buffer.alloc(32, 1).toString('base64')}`),
      })
      .execute();
    return tenantOf(ws.workspaceId);
  };
  const submit = async (tenant: Awaited<ReturnType<typeof tenantOf>>, count: number, label: string) => {
    let next = 0;
    await Promise.all(
      Array.from({ length: 16 }, async () => {
        while (next < count) {
          const i = next++;
          await createJob(
            runtime.services,
            tenant,
            { platform: 'instagram', operation: 'profile', target: `${label}_${i}` },
            { endpoint: 'bench' },
          );
        }
      }),
    );
  };
  const active = async (workspaceId: string) =>
    Boolean(
      await runtime.db
        .selectFrom('jobs')
        .select('id')
        .where('workspace_id', '=', workspaceId)
        .where('status', 'in', ['queued', 'running'])
        .limit(1)
        .executeTakeFirst(),
    );

  console.log(
    `webhooks benchmark: ${new Date().toISOString()}, load average ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
  const rounds: Array<{ service: number; bare: number }> = [];
  let sampleBody = '';
  for (let round = 1; round <= (PARTS.has('a') ? ROUNDS : 0); round++) {
    console.log(`(a) round ${round} of ${ROUNDS}: ${EVENTS} jobs completed into the outbox...`);
    const tenant = await newWorkspace(`a${round}`);
    const extractor = await startWorkerChild(workerPlan(false));
    await submit(tenant, EVENTS, `a${round}`);
    while (await active(tenant.workspace.id)) await new Promise((resolve) => setTimeout(resolve, 20));
    await extractor.stop();
    receiver.reset();
    const deliverer = await startWorkerChild(workerPlan(true));
    await waitFor(() => receiver.count >= EVENTS, 300_000, 'the service deliveries');
    const service = EVENTS / ((receiver.lastAt - deliverer.startedAt) / 1000);
    await deliverer.stop();
    const event = await runtime.db
      .selectFrom('webhook_events')
      .select('body')
      .where('workspace_id', '=', tenant.workspace.id)
      .limit(1)
      .executeTakeFirstOrThrow();
    sampleBody = event.body!;

    receiver.reset();
    const { startedAt } = await barePosts(receiver.url, sampleBody, EVENTS);
    await waitFor(() => receiver.count >= EVENTS, 120_000, 'the bare POSTs');
    const bare = EVENTS / ((receiver.lastAt - startedAt) / 1000);
    rounds.push({ service, bare });
  }

  console.log(`(b) ${RATE} completions/s for ${SECONDS} s...`);
  const tenant = await newWorkspace('b');
  const worker = await startWorkerChild(workerPlan(true));
  receiver.reset();
  const total = RATE * SECONDS;
  const started = epochNow();
  const pending: Promise<unknown>[] = [];
  for (let i = 0; i < total; i++) {
    const due = started + (i * 1000) / RATE;
    const wait = due - epochNow();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    pending.push(
      createJob(runtime.services, tenant, { platform: 'instagram', operation: 'profile', target: `b_${i}` }, { endpoint: 'bench' }),
    );
  }
  await Promise.all(pending);
  await waitFor(() => receiver.arrivals.size >= total, 120_000, 'the deliveries of (b)');
  await worker.stop();
  const finished = await runtime.db
    .selectFrom('jobs')
    .select(['id', 'finished_at'])
    .where('workspace_id', '=', tenant.workspace.id)
    .execute();
  const latencies = finished.map((job) => receiver.arrivals.get(job.id)! - job.finished_at!.getTime());
  const latency = summarize(latencies);
  if (process.env.BENCH_STAGES) {
    const stages = await runtime.db
      .selectFrom('jobs as j')
      .innerJoin('webhook_events as e', 'e.subject_id', 'j.id')
      .innerJoin('webhook_deliveries as d', 'd.event_id', 'e.id')
      .select(['j.finished_at', 'e.dispatched_at', 'd.delivered_at', 'd.created_at'])
      .where('j.workspace_id', '=', tenant.workspace.id)
      .execute();
    const dispatch = summarize(stages.map((r) => r.dispatched_at!.getTime() - r.finished_at!.getTime()));
    const deliver = summarize(stages.map((r) => r.delivered_at!.getTime() - r.dispatched_at!.getTime()));
    console.log(`stages: dispatch p50 ${ms(dispatch.p50)} p99 ${ms(dispatch.p99)}; deliver p50 ${ms(deliver.p50)} p99 ${ms(deliver.p99)}`);
  }

  const sorted = rounds.map((r) => r.service / r.bare).sort((a, b) => a - b);
  const ratio = sorted.length ? sorted[Math.floor(sorted.length / 2)] : Number.NaN;
  console.log('');
  console.log(
    table([
      ['(a) round', 'service events/s', 'bare got POSTs/s', 'ratio'],
      ...rounds.map((r, i) => [String(i + 1), r.service.toFixed(0), r.bare.toFixed(0), (r.service / r.bare).toFixed(2)]),
    ]),
  );
  console.log('');
  console.log(
    table([
      ['(b) completion → delivery', 'count', 'p50 ms', 'p90 ms', 'p99 ms', 'max ms'],
      [`${RATE} completions/s`, String(latency.count), ms(latency.p50), ms(latency.p90), ms(latency.p99), ms(latency.max)],
    ]),
  );
  console.log('');
  const ratioMet = !PARTS.has('a') || ratio >= TARGET_RATIO;
  const latencyMet = latency.p99 < TARGET_P99_MS;
  console.log(
    `(a) events/s from completion to signed delivery / bare got POSTs: ${ratio.toFixed(2)} (median of rounds ${rounds.map((r) => (r.service / r.bare).toFixed(2)).join(', ')}; target ≥ ${TARGET_RATIO}): ${verdict(ratioMet)}`,
  );
  console.log(
    `(b) p99 completion → delivery at ${RATE} completions/s: ${ms(latency.p99)} ms (target < ${TARGET_P99_MS} ms): ${verdict(latencyMet)}`,
  );
  console.log(
    `load average at the end: ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
  const figures: Record<string, number> = {};
  if (PARTS.has('a')) figures['a.ratio'] = ratio;
  if (PARTS.has('b')) figures['b.p99_ms'] = latency.p99;
  console.log(`BENCH_RESULT ${JSON.stringify({ bench: 'webhooks', figures })}`);

  await receiver.close();
  await runtime.queues.webhookDeliveries.obliterate({ force: true }).catch(() => undefined);
  await runtime.queues.jobs.obliterate({ force: true }).catch(() => undefined);
  await runtime.close();
  await database.drop();
  process.exit(ratioMet && latencyMet ? 0 : 1);
}

if (process.argv.includes('--bare-child')) {
  process.once('message', (plan) => {
    runBareChild(plan as { url: string; body: string; count: number })
      .then(() => process.exit(0))
      .catch((error) => {
        console.error(error);
        process.exit(1);
      });
  });
} else {
  main().catch((error) => {
    console.error(error);
    process.exit(1);
  });
}
