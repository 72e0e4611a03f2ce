/**
 * Admission benchmark: what the per-minute rate limiter and the Idempotency-Key lookup add to
 * one POST /v1/jobs, measured against the same endpoint with the control off, in one run.
 *
 * Five variants of the same in-process API, each on its own loopback HTTP server:
 *   baseline        no-op rate limiter, no Idempotency-Key, no spend caps
 *   + rate limiter  RedisRateLimiter (rate-limiter-flexible on the real Redis)
 *   + idempotency   no-op rate limiter, a fresh Idempotency-Key on every request
 *   both            RedisRateLimiter and a fresh Idempotency-Key
 *   + spend caps    no-op rate limiter, no Idempotency-Key, from a workspace and a key that both
 *                   have a monthly_credit_cap (far above the run: checked, never refusing)
 * Requests are sequential (one in flight) and interleaved round-robin across the variants, so
 * drift of the machine affects all four alike. Every request has a distinct target, so
 * deduplication and the cache never short-circuit the admission. Queued jobs are retired in
 * the database every few rounds (as a worker fleet would), so the active-job count stays small.
 *
 * Then: latency of the 503 rate_limiter_unavailable answer with Redis unreachable (a dead
 * port), and, for information, with a Redis that accepts connections but stopped answering.
 *
 * Targets: rate limiter + idempotency together < 2 ms at p50; the spend caps' check (the key's
 * spend read with the balance lock, both caps checked, both months' spend written with the
 * reservation) < 0.5 ms at p50; 503 with Redis unreachable < 100 ms. Exits with code 1 when a
 * target is missed.
 *
 * Run: npm run bench:admission   (BENCH_ROUNDS=2000 by default; DATABASE_URL / REDIS_URL)
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createServer as createNetServer } from 'node:net';
import { createApp, RedisRateLimiter, type RateLimiter } from '@sdx/app-api';
import { loadConfig } from '@sdx/config';
import { createFastRedis } from '@sdx/queue';
import { createRuntime } from '@sdx/runtime';
import { benchPrefix, benchRedisUrl, createBenchDatabase } from './lib/db';
import { keepAliveAgent, send, serve } from './lib/http';
import { AMPLE, seedBenchWorkspace, waitFor } from './lib/seed';
import { ms, summarize, table, verdict } from './lib/stats';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2000);
const WARMUP_ROUNDS = 200;
const RETIRE_EVERY = 100;
const DEAD_REQUESTS = 500;
const STALLED_REQUESTS = 10;
const WARMUP_503 = 5;
const TARGET_ADDED_P50_MS = 2;
const TARGET_CAPS_P50_MS = 0.5;
const TARGET_503_P99_MS = 100;

/** Allows everything without touching Redis: the "control off" limiter. */
const noopLimiter: RateLimiter = {
  consume(_workspaceId, limitPerMinute) {
    return Promise.resolve({ allowed: true, limit: limitPerMinute, remaining: limitPerMinute, resetMs: 60_000 });
  },
};

interface Variant {
  name: string;
  url: string;
  idempotency: boolean;
  auth: Record<string, string>;
  samples: number[];
}

async function main(): Promise<void> {
  const database = await createBenchDatabase('adm');
  const config = loadConfig({
    ...process.env,
    DATABASE_URL: database.url,
    REDIS_URL: benchRedisUrl(),
    REDIS_PREFIX: benchPrefix('adm'),
    LOG_LEVEL: 'silent',
    SEED_DEMO: '0',
  });
  const runtime = createRuntime(config, { name: 'bench-admission', dbPoolSize: 10 });
  const closers: Array<() => Promise<void>> = [];
  let failed = false;
  try {
    await waitFor(() => runtime.redis.status === 'ready', 5000, 'Redis');
    const ws = await seedBenchWorkspace(runtime, { name: 'bench admission', ...AMPLE, caps: false });
    const auth = { 'X-API-Key': ws.apiKey };
    const capped = await seedBenchWorkspace(runtime, { name: 'bench admission capped', ...AMPLE, caps: true });
    const cappedAuth = { 'X-API-Key': capped.apiKey };

    const appWith = (limiter: RateLimiter) =>
      createApp({ services: runtime.services, registry: runtime.registry, limiter, redis: runtime.redis });
    const off = await serve(appWith(noopLimiter));
    const on = await serve(appWith(new RedisRateLimiter(runtime.redis, config.redisPrefix)));
    closers.push(off.close, on.close);

    const variants: Variant[] = [
      { name: 'baseline (controls off)', url: off.url, idempotency: false, auth, samples: [] },
      { name: '+ rate limiter', url: on.url, idempotency: false, auth, samples: [] },
      { name: '+ idempotency key', url: off.url, idempotency: true, auth, samples: [] },
      { name: 'rate limiter + idempotency', url: on.url, idempotency: true, auth, samples: [] },
      { name: '+ spend caps (key and workspace)', url: off.url, idempotency: false, auth: cappedAuth, samples: [] },
    ];
    const agent = keepAliveAgent(4);
    let seq = 0;
    const post = async (variant: Variant, record: boolean) => {
      const n = seq++;
      const headers: Record<string, string> = { ...variant.auth };
      if (variant.idempotency) headers['Idempotency-Key'] = `bench-${n}`;
      const body = JSON.stringify({ platform: 'instagram', operation: 'profile', target: `adm_bench_${n}` });
      const started = performance.now();
      const reply = await send(agent, variant.url, { method: 'POST', path: '/v1/jobs', headers, body });
      const elapsed = performance.now() - started;
      if (reply.status !== 202) throw new Error(`${variant.name}: expected 202, got ${reply.status} ${reply.body.slice(0, 300)}`);
      if (record) variant.samples.push(elapsed);
    };
    const retire = async () => {
      await runtime.db
        .updateTable('jobs')
        .set({ status: 'cancelled', progress_stage: 'cancelled', finished_at: new Date() })
        .where('workspace_id', 'in', [ws.workspaceId, capped.workspaceId])
        .where('status', '=', 'queued')
        .execute();
      await runtime.queues.jobs.drain();
    };

    console.log(
      `admission: ${ROUNDS} rounds x ${variants.length} variants, sequential POST /v1/jobs on loopback (warm-up ${WARMUP_ROUNDS} rounds)`,
    );
    for (let round = 0; round < WARMUP_ROUNDS + ROUNDS; round++) {
      const record = round >= WARMUP_ROUNDS;
      for (let k = 0; k < variants.length; k++) await post(variants[(round + k) % variants.length], record);
      if (round % RETIRE_EVERY === RETIRE_EVERY - 1) await retire();
    }
    agent.destroy();

    const base = summarize(variants[0].samples);
    const rows = [['variant', 'n', 'p50 ms', 'p90 ms', 'p99 ms', 'mean ms', 'added p50 ms', 'added mean ms']];
    const summaries = variants.map((v) => summarize(v.samples));
    variants.forEach((v, i) => {
      const s = summaries[i];
      rows.push([
        v.name,
        String(s.count),
        ms(s.p50),
        ms(s.p90),
        ms(s.p99),
        ms(s.mean),
        i === 0 ? '-' : ms(s.p50 - base.p50),
        i === 0 ? '-' : ms(s.mean - base.mean),
      ]);
    });
    console.log(`\n${table(rows)}`);
    const added = summaries[3].p50 - base.p50;
    const addedOk = added < TARGET_ADDED_P50_MS;
    failed ||= !addedOk;
    console.log(`\nrate limiter + idempotency add ${ms(added)} ms at p50 (target < ${TARGET_ADDED_P50_MS} ms): ${verdict(addedOk)}`);
    const capsAdded = summaries[4].p50 - base.p50;
    const capsOk = capsAdded < TARGET_CAPS_P50_MS;
    failed ||= !capsOk;
    console.log(`spend caps (key and workspace) add ${ms(capsAdded)} ms at p50 (target < ${TARGET_CAPS_P50_MS} ms): ${verdict(capsOk)}`);

    // Redis unreachable: the limiter's connection points at a port nobody listens on.
    const dead = createFastRedis('redis://127.0.0.1:1/0');
    dead.on('error', () => undefined);
    closers.push(() => Promise.resolve(dead.disconnect()));
    const deadServer = await serve(appWith(new RedisRateLimiter(dead, config.redisPrefix)));
    closers.push(deadServer.close);
    const { samples: deadSamples, first: deadFirst } = await measure503(deadServer.url, auth, DEAD_REQUESTS, 'dead');
    const deadSummary = summarize(deadSamples);
    const written = await runtime.db
      .selectFrom('jobs')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .where('target', 'like', 'dead_%')
      .executeTakeFirstOrThrow();
    if (Number(written.n) !== 0) throw new Error(`${written.n} jobs were written while the rate limiter was unavailable`);

    // Redis that accepts connections but does not answer (SIGSTOP): bounded by the command timeout.
    const stalled = await measureStalledRedis(appWith, config.redisPrefix, auth);

    const rows503 = [['503 rate_limiter_unavailable', 'n', 'p50 ms', 'p99 ms', 'max ms']];
    rows503.push([
      'Redis unreachable (dead port)',
      String(deadSummary.count),
      ms(deadSummary.p50),
      ms(deadSummary.p99),
      ms(deadSummary.max),
    ]);
    rows503.push(['Redis stopped answering (SIGSTOP)', String(stalled.count), ms(stalled.p50), ms(stalled.p99), ms(stalled.max)]);
    console.log(`\n${table(rows503)}`);
    console.log(`(first request to the freshly built app, not counted: ${ms(deadFirst)} ms; ${WARMUP_503} warm-up requests per row)`);
    const deadOk = deadSummary.p99 < TARGET_503_P99_MS;
    failed ||= !deadOk;
    console.log(
      `\n503 with Redis unreachable: p99 ${ms(deadSummary.p99)} ms (target < ${TARGET_503_P99_MS} ms): ${verdict(deadOk)}; jobs written: 0`,
    );
  } finally {
    for (const close of closers.reverse()) await close().catch(() => undefined);
    await runtime.queues.jobs.obliterate({ force: true }).catch(() => undefined);
    await runtime.queues.batchChildren.obliterate({ force: true }).catch(() => undefined);
    await runtime.close();
    await database.drop();
  }
  if (failed) process.exitCode = 1;
}

/**
 * Sequential requests that must all answer 503 rate_limiter_unavailable. The first WARMUP_503
 * are not kept: a freshly built app is still compiling openapi.yaml (express-openapi-validator
 * loads it when the app is created), once per process at start.
 */
async function measure503(
  url: string,
  auth: Record<string, string>,
  count: number,
  tag: string,
): Promise<{ samples: number[]; first: number }> {
  const agent = keepAliveAgent(1);
  const samples: number[] = [];
  let first = Number.NaN;
  for (let i = -WARMUP_503; i < count; i++) {
    const body = JSON.stringify({ platform: 'instagram', operation: 'profile', target: `${tag}_${i}` });
    const started = performance.now();
    const reply = await send(agent, url, { method: 'POST', path: '/v1/jobs', headers: auth, body });
    const elapsed = performance.now() - started;
    if (i === -WARMUP_503) first = elapsed;
    if (i >= 0) samples.push(elapsed);
    if (reply.status !== 503 || !reply.body.includes('rate_limiter_unavailable')) {
      throw new Error(`expected 503 rate_limiter_unavailable, got ${reply.status} ${reply.body.slice(0, 200)}`);
    }
  }
  agent.destroy();
  return { samples, first };
}

async function measureStalledRedis(
  appWith: (limiter: RateLimiter) => Parameters<typeof serve>[0],
  prefix: string,
  auth: Record<string, string>,
): Promise<ReturnType<typeof summarize>> {
  const port = await freePort();
  const server: ChildProcess = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
    stdio: 'ignore',
  });
  const redis = createFastRedis(`redis://127.0.0.1:${port}/0`);
  redis.on('error', () => undefined);
  const http = await serve(appWith(new RedisRateLimiter(redis, prefix)));
  try {
    await waitFor(() => redis.status === 'ready', 5000, 'the spare redis-server');
    server.kill('SIGSTOP');
    return summarize((await measure503(http.url, auth, STALLED_REQUESTS, 'stalled')).samples);
  } finally {
    server.kill('SIGCONT');
    server.kill('SIGTERM');
    redis.disconnect();
    await http.close();
  }
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createNetServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}

main().then(
  () => process.exit(process.exitCode ?? 0),
  (error) => {
    console.error(error);
    process.exit(1);
  },
);
