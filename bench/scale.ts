/**
 * Capacity benchmark: the inputs of docs/capacity.md, measured on this machine in one run.
 *
 * (cpu)   Postgres CPU per job. BENCH_JOBS instagram profile jobs (16 in-process producers
 *         calling createJob, as bench:jobs (b); one worker process, concurrency 16, sandbox at zero
 *         latency). Method: every 200 ms the CPU time (utime + stime, /proc/<pid>/stat) of each
 *         Postgres backend connected to the bench database (pg_stat_activity.datname; the
 *         sampler's own connection is to another database) is read; the sum of their growth over
 *         the run is the Postgres CPU the jobs cost. The server's auxiliary processes (WAL writer,
 *         checkpointer, background writer, autovacuum) are read the same way and printed apart:
 *         they serve every database of the server, so on a shared server they are an upper bound.
 *         Jobs per Postgres core-second = jobs / that CPU; credits settled per core-second = the
 *         jobs' billed credits / that CPU. The redis-server (a private one, started by the run) is
 *         read the same way (INFO server process_id), and so are the worker and the producer.
 * (bytes) Bytes per job in Postgres and in the object store, per operation: for each of
 *         instagram profile, instagram posts (limit 100), twitter followers (limit 1000) and
 *         instagram comments (limit 100), a batch of jobs is run with RESULT_STORE=postgres and
 *         then with RESULT_STORE=s3 against a loopback S3 (s3rver); the growth of
 *         pg_total_relation_size (table + indexes + TOAST) of every table is divided by the jobs,
 *         and the object store's bytes are the pages' stored_bytes (what the service wrote, the
 *         compressed NDJSON), beside the growth of s3rver's folder (objects plus its metadata
 *         files). Each batch's Postgres CPU is read as in (cpu).
 * (redis) Redis memory per queued job: INFO memory used_memory before and after BENCH_QUEUED jobs
 *         are admitted with no worker running, once by 16 producers (jobs admitted together share
 *         a queue entry, up to 16 per entry) and once by one producer (an entry per job).
 * (multi) 2 API + 2 worker processes against 1 + 1 (apps/api and apps/worker started as their
 *         own node processes, as in production): BENCH_MULTI_JOBS POST /v1/jobs from 32 client
 *         connections in all (split over the APIs), first request to last completion; the
 *         throughput ratio 2+2 / 1+1, and each process kind's CPU per job.
 *
 * Everything runs on this machine: the private Redis, the shared Postgres (a database of its own),
 * the loopback S3, the service processes and the load generator. On a 2-core machine the multi-
 * process ratio measures contention for those cores, not the service's scaling (docs/capacity.md).
 *
 * Run: npm run bench:scale   (about a minute)
 *   BENCH_PARTS (cpu,bytes,redis,multi), BENCH_JOBS (2000: jobs of (cpu)), BENCH_SIZE_SCALE (1:
 *   multiplies the batch sizes of (bytes): 300 profile, 100 posts, 30 followers, 60 comments),
 *   BENCH_QUEUED (2000: jobs queued in (redis), per producer shape), BENCH_MULTI_JOBS (2000),
 *   BENCH_TURNS (2: rounds of 1+1 and 2+2 taking turns), BENCH_WORKER_CONCURRENCY (16); DATABASE_URL.
 */
import { readdirSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { loadConfig } from '@sdx/config';
import { createJob } from '@sdx/domain/testing';
import { createRuntime, type Runtime } from '@sdx/runtime';
import { sql } from 'kysely';
import IORedis from 'ioredis';
import { processesCpu, samplePostgresCpu } from './lib/cpu';
import { adminDatabaseUrl, createBenchDatabase, type BenchDatabase } from './lib/db';
import { runLoad } from './lib/loadgen';
import { AMPLE, seedBenchWorkspace } from './lib/seed';
import { table } from './lib/stats';
import { epochNow, startWorkerChild } from './lib/worker-child';
import { type ServiceProcess, startService } from './drills/lib';
import { freePort, type LoopbackS3, type PrivateRedis, startLoopbackS3, startPrivateRedis, TEST_SECRETS_KEY } from '@sdx/testing';

const PARTS = new Set((process.env.BENCH_PARTS ?? 'cpu,bytes,redis,multi').split(','));
const JOBS = Number(process.env.BENCH_JOBS ?? 2000);
const SIZE_SCALE = Number(process.env.BENCH_SIZE_SCALE ?? 1);
const QUEUED = Number(process.env.BENCH_QUEUED ?? 2000);
const MULTI_JOBS = Number(process.env.BENCH_MULTI_JOBS ?? 2000);
const TURNS = Math.max(1, Number(process.env.BENCH_TURNS ?? 2));
const WORKER_CONCURRENCY = Number(process.env.BENCH_WORKER_CONCURRENCY ?? 16);
const PRODUCERS = 16;
const BUCKET = 'sdx-results';

interface Operation {
  label: string;
  platform: string;
  operation: string;
  target: (i: number) => string;
  limit?: number;
  jobs: number;
}

const OPERATIONS: Operation[] = [
  { label: 'instagram profile', platform: 'instagram', operation: 'profile', target: (i) => `scaleprofile${i}`, jobs: 300 },
  {
    label: 'instagram posts, limit 100',
    platform: 'instagram',
    operation: 'posts',
    target: (i) => `scaleposts${i}`,
    limit: 100,
    jobs: 100,
  },
  {
    label: 'twitter followers, limit 1000',
    platform: 'twitter',
    operation: 'followers',
    target: (i) => `scalefollowers${i}`,
    limit: 1000,
    jobs: 30,
  },
  {
    label: 'instagram comments, limit 100',
    platform: 'instagram',
    operation: 'comments',
    target: (i) => `Cscale${i}`,
    limit: 100,
    jobs: 60,
  },
];

type Tenant = Parameters<typeof createJob>[1];

async function main(): Promise<void> {
  process.env.PROVIDER_MODE ??= 'sandbox';
  const database = await createBenchDatabase('scale');
  const redis = await startPrivateRedis();
  const s3 = await startLoopbackS3([BUCKET]);
  const admin = new pg.Pool({ connectionString: adminDatabaseUrl(), max: 2 });
  const env: Record<string, string> = {
    NODE_ENV: 'production',
    SECRETS_KEY: TEST_SECRETS_KEY,
    PROVIDER_MODE: 'sandbox',
    DATABASE_URL: database.url,
    REDIS_URL: redis.url,
    REDIS_PREFIX: 'sdxscale',
    LOG_LEVEL: 'silent',
    SANDBOX_LATENCY_MS: '0',
    SEED_DEMO: '0',
  };
  const s3Env: Record<string, string> = {
    RESULT_STORE: 's3',
    S3_ENDPOINT: s3.endpoint,
    S3_BUCKET: BUCKET,
    S3_REGION: s3.region,
    S3_ACCESS_KEY_ID: s3.accessKeyId,
    S3_SECRET_ACCESS_KEY: s3.secretAccessKey,
    S3_FORCE_PATH_STYLE: '1',
  };
  const runtime = createRuntime(loadConfig(env), { name: 'bench-scale', dbPoolSize: 20, env });
  const redisPid = Number(/process_id:(\d+)/.exec(await redisInfo(redis, 'server'))?.[1]);
  try {
    while (runtime.redis.status !== 'ready') await new Promise((r) => setTimeout(r, 10));
    console.log(`capacity benchmark: ${new Date().toISOString()}, ${os.cpus().length} cores, load average ${loadAverage()}`);
    if (PARTS.has('cpu')) await measureCpu(runtime, database, admin, env, redisPid);
    if (PARTS.has('bytes')) await measureBytes(runtime, database, admin, env, s3Env, s3);
    if (PARTS.has('redis')) await measureRedis(runtime, redis);
    if (PARTS.has('multi')) await measureMulti(runtime, database, admin, env);
    console.log(`\nload average at the end: ${loadAverage()}`);
  } finally {
    await runtime.queues.jobs.obliterate({ force: true }).catch(() => undefined);
    await runtime.close().catch(() => undefined);
    await admin.end().catch(() => undefined);
    await database.drop().catch(() => undefined);
    await redis.destroy().catch(() => undefined);
    await s3.stop().catch(() => undefined);
  }
}

// ---- (cpu) ----------------------------------------------------------------------------------

async function measureCpu(
  runtime: Runtime,
  database: BenchDatabase,
  admin: pg.Pool,
  env: Record<string, string>,
  redisPid: number,
): Promise<void> {
  console.log(
    `\n(cpu) ${JOBS} instagram profile jobs, ${PRODUCERS} producers (createJob), 1 worker process at concurrency ${WORKER_CONCURRENCY}...`,
  );
  const worker = await startWorkerChild({
    kind: 'real',
    concurrency: WORKER_CONCURRENCY,
    redisUrl: env.REDIS_URL,
    prefix: env.REDIS_PREFIX,
    env,
  });
  try {
    // Warm-up: the worker's and this process's code paths compiled, the pools' connections open.
    const warm = await tenantOf(runtime, 'scale warm-up');
    await produce(200, PRODUCERS, (i) =>
      createJob(
        runtime.services,
        warm,
        { platform: 'instagram', operation: 'profile', target: `scalewarm${i}` },
        { endpoint: 'POST /v1/jobs' },
      ),
    );
    await waitForCompleted(runtime, warm.workspace.id, 200);

    const tenant = await tenantOf(runtime, 'scale cpu');
    const pgCpu = samplePostgresCpu(admin, database.name);
    const redisCpu = processesCpu([redisPid]);
    const self = process.cpuUsage();
    const start = epochNow();
    await produce(JOBS, PRODUCERS, (i) =>
      createJob(
        runtime.services,
        tenant,
        { platform: 'instagram', operation: 'profile', target: `scalecpu${i}` },
        { endpoint: 'POST /v1/jobs' },
      ),
    );
    const done = await waitForCompleted(runtime, tenant.workspace.id, JOBS);
    const wall = (done - start) / 1000;
    const postgres = await pgCpu.stop();
    const redisSeconds = redisCpu.stop();
    const producer = process.cpuUsage(self);
    const credits = await billedCredits(runtime, tenant.workspace.id);

    const rows = [['(cpu) figure', 'value']];
    rows.push(['jobs completed', String(JOBS)]);
    rows.push(['wall time, first submission to last completion', `${wall.toFixed(2)} s (${(JOBS / wall).toFixed(0)} jobs/s)`]);
    rows.push(['credits settled', `${credits} (${(credits / wall).toFixed(0)}/s)`]);
    rows.push([
      `Postgres backends' CPU (${postgres.backendCount} backends)`,
      `${postgres.backends.toFixed(2)} s = ${((postgres.backends * 1000) / JOBS).toFixed(3)} ms per job`,
    ]);
    rows.push([
      'Postgres auxiliary processes (server-wide, upper bound)',
      `${postgres.auxiliary.toFixed(2)} s = ${((postgres.auxiliary * 1000) / JOBS).toFixed(3)} ms per job`,
    ]);
    rows.push(['jobs per Postgres core-second (backends)', (JOBS / postgres.backends).toFixed(0)]);
    rows.push(['jobs per Postgres core-second (backends + auxiliary)', (JOBS / (postgres.backends + postgres.auxiliary)).toFixed(0)]);
    rows.push(['credits settled per Postgres core-second (backends)', (credits / postgres.backends).toFixed(0)]);
    rows.push([
      'redis-server CPU',
      `${redisSeconds.toFixed(2)} s = ${((redisSeconds * 1000) / JOBS).toFixed(3)} ms per job; ${(JOBS / redisSeconds).toFixed(0)} jobs per Redis core-second`,
    ]);
    rows.push(['producer (createJob, this process) CPU', `${((producer.user + producer.system) / 1000 / JOBS).toFixed(3)} ms per job`]);
    console.log(`\n${table(rows)}`);
  } finally {
    await worker.stop();
  }
}

// ---- (bytes) --------------------------------------------------------------------------------

async function measureBytes(
  runtime: Runtime,
  database: BenchDatabase,
  admin: pg.Pool,
  env: Record<string, string>,
  s3Env: Record<string, string>,
  s3: LoopbackS3,
): Promise<void> {
  const rows = [
    [
      '(bytes) operation',
      'store',
      'jobs',
      'items/job',
      'pages/job',
      'PG bytes/job',
      'jobs',
      'result pages',
      'ledger+resv',
      'other',
      'object bytes/job',
      's3rver dir/job',
      'PG CPU ms/job',
      'credits/job',
    ],
  ];
  for (const store of ['postgres', 's3'] as const) {
    console.log(
      `\n(bytes) RESULT_STORE=${store}: ${OPERATIONS.map((o) => `${Math.max(1, Math.round(o.jobs * SIZE_SCALE))} ${o.label}`).join(', ')}...`,
    );
    const worker = await startWorkerChild({
      kind: 'real',
      concurrency: WORKER_CONCURRENCY,
      redisUrl: env.REDIS_URL,
      prefix: env.REDIS_PREFIX,
      env: store === 's3' ? { ...env, ...s3Env } : env,
    });
    try {
      for (const op of OPERATIONS) {
        const jobs = Math.max(1, Math.round(op.jobs * SIZE_SCALE));
        const tenant = await tenantOf(runtime, `scale ${store} ${op.operation}`);
        const before = await relationSizes(runtime);
        const dirBefore = folderBytes(s3.directory);
        const pgCpu = samplePostgresCpu(admin, database.name);
        await produce(jobs, PRODUCERS, (i) =>
          createJob(
            runtime.services,
            tenant,
            { platform: op.platform, operation: op.operation, target: op.target(i), ...(op.limit ? { limit: op.limit } : {}) },
            { endpoint: 'POST /v1/jobs' },
          ),
        );
        await waitForCompleted(runtime, tenant.workspace.id, jobs);
        const cpu = await pgCpu.stop();
        const credits = await billedCredits(runtime, tenant.workspace.id);
        const after = await relationSizes(runtime);
        const dirAfter = folderBytes(s3.directory);
        const pages = await runtime.db
          .selectFrom('job_result_pages as p')
          .innerJoin('jobs as j', 'j.id', 'p.job_id')
          .select(sql<string>`coalesce(sum(p.stored_bytes), 0)::bigint`.as('stored'))
          .select(sql<string>`count(*)`.as('pages'))
          .select(sql<string>`coalesce(sum(p.item_count), 0)::bigint`.as('items'))
          .where('j.workspace_id', '=', tenant.workspace.id)
          .executeTakeFirstOrThrow();
        const growth = (names: string[] | null) => {
          let total = 0;
          for (const [name, size] of after) {
            const inGroup = names === null ? !GROUPED.has(name) : names.includes(name);
            if (inGroup) total += size - (before.get(name) ?? 0);
          }
          return total / jobs;
        };
        const all = [...after].reduce((n, [name, size]) => n + size - (before.get(name) ?? 0), 0) / jobs;
        rows.push([
          op.label,
          store,
          String(jobs),
          (Number(pages.items) / jobs).toFixed(0),
          (Number(pages.pages) / jobs).toFixed(1),
          bytes(all),
          bytes(growth(['jobs'])),
          bytes(growth(['job_result_pages'])),
          bytes(growth(['credit_ledger', 'credit_reservations'])),
          bytes(growth(null)),
          bytes(Number(pages.stored) / jobs),
          bytes((dirAfter - dirBefore) / jobs),
          ((cpu.backends * 1000) / jobs).toFixed(2),
          (credits / jobs).toFixed(0),
        ]);
      }
    } finally {
      await worker.stop();
    }
  }
  console.log(`\n${table(rows)}`);
  console.log(
    '    PG bytes/job: growth of pg_total_relation_size (table, indexes, TOAST; dead row versions until vacuum) of every table, per job;',
  );
  console.log('    pages/job: result pages written (with RESULT_STORE=s3, one object PUT each).');
  console.log(
    "    PG CPU ms/job: the Postgres backends' CPU over the batch (as in (cpu)), per job; credits/job: billed (settled) credits.",
  );
  console.log(
    "    object bytes/job: the pages' stored_bytes (compressed NDJSON); s3rver dir/job: its folder's growth (objects + metadata files).",
  );
}

const GROUPED = new Set(['jobs', 'job_result_pages', 'credit_ledger', 'credit_reservations']);

async function relationSizes(runtime: Runtime): Promise<Map<string, number>> {
  const { rows } = await runtime.db.executeQuery(
    sql<{ name: string; size: string }>`select c.relname as name, pg_total_relation_size(c.oid)::bigint as size
      from pg_class c join pg_namespace n on n.oid = c.relnamespace
      where n.nspname = 'public' and c.relkind in ('r', 'p')`.compile(runtime.db),
  );
  return new Map(rows.map((r) => [r.name, Number(r.size)]));
}

function folderBytes(dir: string): number {
  let total = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    total += entry.isDirectory() ? folderBytes(full) : statSync(full).size;
  }
  return total;
}

// ---- (redis) --------------------------------------------------------------------------------

async function measureRedis(runtime: Runtime, redis: PrivateRedis): Promise<void> {
  console.log(`\n(redis) ${QUEUED} jobs queued with no worker, by ${PRODUCERS} producers and by 1...`);
  const rows = [['(redis) producers', 'jobs queued', 'used_memory growth', 'bytes per queued job', 'keys added']];
  for (const producers of [PRODUCERS, 1]) {
    await runtime.queues.jobs.obliterate({ force: true });
    const tenant = await tenantOf(runtime, `scale redis ${producers}`);
    const memBefore = await usedMemory(redis);
    const keysBefore = await dbSize(redis);
    await produce(QUEUED, producers, (i) =>
      createJob(
        runtime.services,
        tenant,
        { platform: 'instagram', operation: 'profile', target: `scaleq${producers}x${i}` },
        { endpoint: 'POST /v1/jobs' },
      ),
    );
    const memAfter = await usedMemory(redis);
    const keysAfter = await dbSize(redis);
    rows.push([
      String(producers),
      String(QUEUED),
      bytes(memAfter - memBefore),
      bytes((memAfter - memBefore) / QUEUED),
      String(keysAfter - keysBefore),
    ]);
  }
  await runtime.queues.jobs.obliterate({ force: true });
  console.log(`\n${table(rows)}`);
  console.log('    jobs admitted together share a queue entry (up to 16): 16 producers give shared entries, 1 producer an entry per job.');
}

async function redisInfo(redis: PrivateRedis, section: string): Promise<string> {
  const client = new IORedis(redis.url, { maxRetriesPerRequest: 1 });
  try {
    return await client.info(section);
  } finally {
    client.disconnect();
  }
}

async function usedMemory(redis: PrivateRedis): Promise<number> {
  return Number(/used_memory:(\d+)/.exec(await redisInfo(redis, 'memory'))?.[1]);
}

async function dbSize(redis: PrivateRedis): Promise<number> {
  const client = new IORedis(redis.url, { maxRetriesPerRequest: 1 });
  try {
    return await client.dbsize();
  } finally {
    client.disconnect();
  }
}

// ---- (multi) --------------------------------------------------------------------------------

interface Fleet {
  apis: Array<{ process: ServiceProcess; url: string }>;
  workers: ServiceProcess[];
}

async function measureMulti(runtime: Runtime, database: BenchDatabase, admin: pg.Pool, env: Record<string, string>): Promise<void> {
  console.log(
    `\n(multi) ${MULTI_JOBS} POST /v1/jobs over 32 connections, 1 API + 1 worker and 2 + 2 taking turns (worker concurrency ${WORKER_CONCURRENCY}), ${TURNS} round(s)...`,
  );
  const fleet: Fleet = { apis: [], workers: [] };
  const serviceEnv = { ...env, WORKER_CONCURRENCY: String(WORKER_CONCURRENCY) };
  const grow = async (size: number) => {
    const starting: Array<Promise<void>> = [];
    while (fleet.apis.length < size) {
      const port = await freePort();
      const api = {
        process: startService('api', { ...serviceEnv, PORT: String(port) }, `api-${fleet.apis.length + 1}`),
        url: `http://127.0.0.1:${port}`,
      };
      fleet.apis.push(api);
      starting.push(untilReady(api.url, api.process));
    }
    while (fleet.workers.length < size) {
      const port = await freePort();
      const worker = startService('worker', { ...serviceEnv, METRICS_PORT: String(port) }, `worker-${fleet.workers.length + 1}`);
      fleet.workers.push(worker);
      starting.push(untilReady(`http://127.0.0.1:${port}`, worker));
    }
    await Promise.all(starting);
  };
  const shrink = async (size: number) => {
    while (fleet.apis.length > size) await fleet.apis.pop()!.process.stop('SIGTERM');
    while (fleet.workers.length > size) await fleet.workers.pop()!.stop('SIGTERM');
  };
  const results: Record<1 | 2, Array<{ rate: number; apiMs: number; workerMs: number; pgMs: number }>> = { 1: [], 2: [] };
  try {
    for (let round = 1; round <= TURNS; round++) {
      // The two fleets take turns, the order reversed every other round, so drift reaches both.
      for (const size of round % 2 === 1 ? ([1, 2] as const) : ([2, 1] as const)) {
        await shrink(size);
        await grow(size);
        const ws = await seedBenchWorkspace(runtime, { name: `scale multi ${size} ${round}`, ...AMPLE });
        // A short warm-up on each API, so compilation and pools are not measured.
        await Promise.all(
          fleet.apis.map((api, a) =>
            runLoad({
              mode: 'closed',
              baseUrl: api.url,
              path: '/v1/jobs',
              headers: { 'X-API-Key': ws.apiKey },
              bodyTemplate: job(`warm${size}r${round}a${a}`),
              okStatus: 202,
              concurrency: 8,
              total: 100,
            }),
          ),
        );
        await waitForCompleted(runtime, ws.workspaceId, 100 * size);
        const apiCpu = processesCpu(fleet.apis.map((a) => a.process.proc.pid!));
        const workerCpu = processesCpu(fleet.workers.map((w) => w.proc.pid!));
        const pgCpu = samplePostgresCpu(admin, database.name);
        const start = epochNow();
        const reports = await Promise.all(
          fleet.apis.map((api, a) =>
            runLoad({
              mode: 'closed',
              baseUrl: api.url,
              path: '/v1/jobs',
              headers: { 'X-API-Key': ws.apiKey },
              bodyTemplate: job(`multi${size}r${round}a${a}`),
              okStatus: 202,
              concurrency: 32 / size,
              total: MULTI_JOBS / size,
            }),
          ),
        );
        for (const r of reports) if (r.ok !== r.sent) throw new Error(`${r.sent - r.ok} of ${r.sent} submissions failed: ${r.firstError}`);
        const done = await waitForCompleted(runtime, ws.workspaceId, MULTI_JOBS + 100 * size);
        const pg = await pgCpu.stop();
        results[size].push({
          rate: MULTI_JOBS / ((done - start) / 1000),
          apiMs: (apiCpu.stop() * 1000) / MULTI_JOBS,
          workerMs: (workerCpu.stop() * 1000) / MULTI_JOBS,
          pgMs: (pg.backends * 1000) / MULTI_JOBS,
        });
      }
    }
  } finally {
    await shrink(0);
  }
  const rows = [['(multi) fleet', 'jobs/s (first request to last completion)', 'API CPU ms/job', 'worker CPU ms/job', 'PG CPU ms/job']];
  for (const size of [1, 2] as const) {
    const runs = results[size];
    const mean = (f: (r: (typeof runs)[number]) => number) => runs.reduce((n, r) => n + f(r), 0) / runs.length;
    rows.push([
      `${size} API + ${size} worker`,
      runs.map((r) => r.rate.toFixed(0)).join(', '),
      mean((r) => r.apiMs).toFixed(2),
      mean((r) => r.workerMs).toFixed(2),
      mean((r) => r.pgMs).toFixed(2),
    ]);
  }
  console.log(`\n${table(rows)}`);
  // Rounds' ratios: each round's 2+2 against its own 1+1.
  const ratios = results[2].map((r, i) => r.rate / results[1][i].rate);
  console.log(
    `\n(multi) throughput ratio 2+2 / 1+1: ${median(ratios).toFixed(2)} (rounds ${ratios.map((r) => r.toFixed(2)).join(', ')}) on ${os.cpus().length} cores`,
  );
}

function job(tag: string): string {
  return `{"platform":"instagram","operation":"profile","target":"${tag}_{i}"}`;
}

async function untilReady(url: string, service: ServiceProcess): Promise<void> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (!service.alive()) throw new Error(`${service.name} exited: ${service.output().slice(-2000)}`);
    const ok = await fetch(`${url}/readyz`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) return;
    if (Date.now() > deadline) throw new Error(`${service.name} not ready within 60 s: ${service.output().slice(-2000)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

// ---- shared ---------------------------------------------------------------------------------

async function tenantOf(runtime: Runtime, name: string): Promise<Tenant> {
  const ws = await seedBenchWorkspace(runtime, { name, ...AMPLE });
  return {
    workspace: await runtime.db.selectFrom('workspaces').selectAll().where('id', '=', ws.workspaceId).executeTakeFirstOrThrow(),
    keyId: ws.keyId,
    role: null,
  };
}

async function produce(total: number, concurrency: number, submit: (i: number) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < total) await submit(next++);
    }),
  );
}

/** When the workspace has no queued or running job left (polled cheaply), checked to be `count` completed. */
async function waitForCompleted(runtime: Runtime, workspaceId: string, count: number): Promise<number> {
  const deadline = Date.now() + 300_000;
  for (;;) {
    const active = await runtime.db
      .selectFrom('jobs')
      .select('id')
      .where('workspace_id', '=', workspaceId)
      .where('status', 'in', ['queued', 'running'])
      .limit(1)
      .executeTakeFirst();
    if (!active) break;
    if (Date.now() > deadline) throw new Error('jobs still active after 300 s');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const doneAt = epochNow();
  const row = await runtime.db
    .selectFrom('jobs')
    .select(sql<number>`count(*) filter (where status = 'completed')::int`.as('done'))
    .select(sql<number>`count(*) filter (where status <> 'completed')::int`.as('bad'))
    .where('workspace_id', '=', workspaceId)
    .executeTakeFirstOrThrow();
  if (row.bad > 0 || row.done < count) throw new Error(`${row.done} of ${count} jobs completed, ${row.bad} did not`);
  return doneAt;
}

async function billedCredits(runtime: Runtime, workspaceId: string): Promise<number> {
  const row = await runtime.db
    .selectFrom('jobs')
    .select(sql<string>`coalesce(sum(billed_credits), 0)::bigint`.as('credits'))
    .where('workspace_id', '=', workspaceId)
    .executeTakeFirstOrThrow();
  return Number(row.credits);
}

function bytes(n: number): string {
  if (!Number.isFinite(n)) return '-';
  const abs = Math.abs(n);
  if (abs >= 1024 * 1024) return `${(n / 1024 / 1024).toFixed(2)} MB`;
  if (abs >= 1024) return `${(n / 1024).toFixed(1)} kB`;
  return `${n.toFixed(0)} B`;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

function loadAverage(): string {
  return os
    .loadavg()
    .map((n) => n.toFixed(2))
    .join(' ');
}

main().then(
  () => process.exit(process.exitCode ?? 0),
  (error) => {
    console.error(error);
    process.exit(1);
  },
);
